// Package lwepir is a hint-free, LWE-based single-server PIR: the default
// scheme of the device.
//
// The first dimension is SimplePIR's (Henzinger, Hong, Corrigan-Gibbs,
// Meiklejohn, Vaikuntanathan; USENIX Security 2023): the database is a byte
// matrix D of Rows×Cols entries, the query an LWE encryption
// q = A·s + e + Δ·u_col modulo 2^32, and the server's scan is the product D·q,
// one 32-bit multiply-add per database byte with no modular reduction and no
// NTT. That product is what reaches memory speed (package fhe/matvec).
//
// SimplePIR's client then needs the hint H = D·A, a download the size of a
// fraction of the database, again after every change. Here, as in HintlessPIR
// (Li, Micciancio, Raykova, Schultz-Wu; "Hintless Single-Server Private
// Information Retrieval", CRYPTO 2024), the server keeps H and computes H·s
// itself under a second, ring-based scheme: the client sends s encrypted in
// the slots of one BGV ciphertext and the server evaluates the Rows×N matrix
// H on it with the baby-step giant-step diagonal method. The diagonals are
// precomputed when the database is loaded (they are part of a generation,
// stored beside the data); a query needs two Galois keys, uploaded once per
// client. The public matrix A is made of negacyclic blocks of polynomials
// drawn from a seed, as in YPIR (Menon, Wu; USENIX Security 2024), so that H
// is computed with NTTs at load time rather than with Rows×Cols×N products.
//
// Parameters follow YPIR's first layer (N = 2048, q = 2^32, error of width
// 16.04, i.e. σ = 6.4, database entries of 8 bits) and, for the ring stage,
// the homomorphic encryption standard's table at 128-bit security
// (log QP ≤ 218 for ring degree 8192). Secrets and errors come from
// crypto/rand through constant-time centred binomial samplers.
//
// A client receives a whole column of Rows bytes: records are laid out so that
// each lies inside one column.
//
// # The ring stage's cost
//
// At a 1 GiB database's layout (2048 rows: R = 512, B1 = 32, B2 = 16, one
// output) a query's ring stage is 48 key switches (31 baby steps, each a
// rotation by one of the last; 15 giant steps by 32; 2 row sums) and
// Rows·N·4 = 16.8 million Montgomery products over 64 MiB of diagonals.
// Measured (BenchmarkRingStage1GiB), the key switches are three quarters of
// it. What was done, and why:
//
//   - The products are summed over the B1 baby steps in 128 bits and
//     reduced once per eight (dotMont): in Go, loop-interchanged, 2.25 ns a
//     product against rns.MACMontSum's 6.9 (which stays where fhe/rns has
//     vector kernels). Every sum is a canonical residue, so the
//     ciphertexts are the old path's bit for bit: −18% CPU a query.
//   - Hoisting (one decomposition of x shared by all baby-step key
//     switches) needs a key per rotation amount; the two keys a client
//     uploads allow only the chain of rotations by one, which shares
//     nothing. A client whose keys include Layout.HoistRotations (B1−2 more,
//     30 × 0.8 MB at 1 GiB, uploaded once) gets its baby steps hoisted:
//     2.3× faster, −33% of the ring stage on top of the above. Its hint
//     ciphertexts differ (other noise) and decrypt to the same values;
//     clients without those keys are served as before. The hoisting runs
//     on Lattigo's evaluator (no lowered program shares a decomposition);
//     where fhe/rns has AVX-512 kernels the engine's single rotations are
//     2–4× faster than Lattigo's, so there compare engine/new with
//     engine/hoisted (BenchmarkRingStage1GiB) before asking for the keys.
//   - A batch shares the pass over the diagonals (EvaluateHintBatch): each
//     piece of a diagonal is read once and multiplied into every waiting
//     query's baby steps while in cache, so the diagonals (64 MiB at 1 GiB,
//     512 MiB at 4 GiB) cross the memory bus once a batch. The key switches
//     cannot be shared: each query's are under its own client's keys.
//   - Not taken: fewer key switches by layout (for R diagonals a query
//     needs R rotations of x, B1·B2 = R, and B1 + B2 is least at 32 + 16
//     for R = 512; a client sending its secret in B1 rotations itself
//     would leave the server B2 + 1 key switches, for 31 ciphertexts, 4 MiB,
//     more a query at 1 GiB); fewer rows for the same database (fewer
//     products and 33 key switches at 1024 rows, but twice the query
//     vector and the client's work, and 2^20 columns is MaxLogCols: no room
//     at 4 GiB); one prime fewer (the products' noise, by estimate
//     t·‖P‖·√R·‖e‖ ≈ 2^100 before the modulus switch, needs both 60-bit
//     primes); a smaller ring (log QP = 181 exceeds the standard's 109 at
//     degree 4096). Diagonals were already stored in the evaluation domain
//     (NTT and Montgomery form) at load time.
//
// No parameter changed: the security argument above stands as it was.
//
// CPU a query, 1 GiB layout, the device's rotator, on 2 vCPUs of an AMD
// EPYC with AVX2 and no AVX-512 (fhe/rns runs its Go kernels), other jobs
// holding the load at 9–14: 347 ms before, 286 ms (1.21×) after, 191 ms
// (1.82×) with hoisting keys; batches of 16: 352, 291, 206 ms. At the
// 4 GiB layout (95 key switches, 67 million products): 1008, 806 (1.25×),
// 606 ms (1.66×) a query, batches of 16 the same. Per query, a batch
// costs what single queries cost (the key switches dominate and the
// products are compute-bound in Go); what it saves is the diagonals'
// memory traffic, which matters where the products run at vector speed.
//
// # Batching the ring stage on a device
//
// A device's scan batcher (package device/pirserver) gathers the queries
// of one generation and runs one Scan for them all; the ring stages run each on
// its own (EvaluateHint). To share the diagonals, the batcher takes each
// waiting query's decoded keys and encrypted secret beside its scan vector,
// checks the keys with Server.CheckKeys before the query joins (a batch is
// refused whole for one client's bad keys), and runs, beside Scan(ctx, qs,
// tiles, run), one EvaluateHintBatch(ctx, keys, secrets, diags, run) over
// the first query's pinned diagonals (one generation: the same diagonals),
// in groups bounded by memory: (B1 + B2) ciphertexts a query, 12 MiB at
// 1 GiB, 24 MiB at 4 GiB. A query's hint then waits for its group's ring
// stage, so the group also bounds its latency. Keys for hoisting add
// 24 MB a client: a device that reads and decodes keys per query should
// keep them decoded (30 decodings, 0.8 ms each here by
// BenchmarkUnmarshalGaloisKey, are a quarter of what hoisting saves).
//
// # The packed mode: the answer packed, no H·s at query time
//
// Issue 40 asks to cut the ring stage (H·s under BGV, 48 key switches a
// query at 1 GiB). The packed mode, YPIR+SP's second half (Menon, Wu;
// "YPIR: High-Throughput Single-Server PIR with Silent Preprocessing",
// USENIX Security 2024), drops it: the scan's column is Rows LWE
// ciphertexts (H'_i, b_i) under the query's secret s, b_i = (D·q)_i −
// 128·Σ_j q_j, whose a-parts H'_i are rows of the query-independent hint;
// the server packs them into ⌈Rows/N⌉ RLWE ciphertexts under the ring
// version of s and the client decrypts those. It is the client's default
// (client.LWEPacked): such a database stores the packer and no diagonals. Files: pack_params.go (the
// ring, gadget, kernels' contracts), pack_keys.go (the client's packing
// keys, their wire form), pack_precompute.go (load time), pack_online.go
// (per query and per batch), pack_absorb.go (the lower levels as one dot
// product), pack_kernels.go, pack_store.go (the precomputation stored and
// loaded), pack_client.go (the client, the answer's wire form),
// pack_twokeys.go (PackV3, the default: two keys), bitpack.go.
//
// Packing. Row i, scaled from 2^32 to a prime Q and read as a ring element
// of Z_Q[X]/(X^N+1) (h_0, then −h_j at N−j), is an RLWE ciphertext under
// s(X) carrying the row in its constant coefficient. The tree of Chen,
// Dai, Kim and Song ("Efficient Homomorphic Conversion Between (Ring) LWE
// Ciphertexts", ACNS 2021) merges them: at level k, ct = ct_e + X^(N/2^k)·
// ct_o + τ_k(ct_e − X^(N/2^k)·ct_o), τ_k: X → X^(2^k+1), the automorphism
// followed by a key switching from τ_k(s) back to s; N leaves end at
// coefficients 0…N−1 multiplied by N (the leaves' a-parts carry N^{-1});
// fewer than N rows sit at a stride and the upper levels, with no odd
// child, are the field trace. The keys are log N = 11 automorphism keys of
// Digits gadget digits (PackV1: 3 of base 2^18; PackV2: 2 of base 2^16,
// below; PackV3, the default, packs otherwise with two keys). Their a-parts K1 are public,
// expanded from the database seed, so that every a-part in the tree
// depends on H' and K1 alone: the server computes the whole a-side when
// the database is loaded and stores, for each of the N − 1 merge nodes of
// a pack, the NTT of the digits its key switching decomposes (Packer).
// A query's work is then the b-side only, in the NTT domain: at each node
// a product a digit with the query's key b-parts and, above the bottom level, one
// monomial product, an automorphism (a permutation) and additions; at the
// root one inverse NTT, then each row's scaled b_i added at its
// coefficient (Finish). The b-side is linear in the keys, so the lowest
// levels are absorbed (pack_absorb.go; PackV1: 4, PackV2: 5): in PackV1,
// each subtree of 15 merge nodes is
// stored as 45 factors of the keys' automorphic images σ(K), which a query
// computes once, and evaluated as one dot product reduced once — the same
// stored words, no merges below level 5 (51 → 30 CPU ms a pack here). The
// dot products are nine tenths of a query's packing; with AVX2 they run in
// 27-bit limbs, three VPMULUDQ a product (dot27.go: 30 → 21 CPU ms a pack,
// the speed at which one core reads the 94 MB of factors). A batch of
// three or more queries shares each factor's load and limb split among four
// queries a call (dot27q4.go): at PackV3's 2047 terms a pack, 1.4× the
// single-query kernel's speed for four queries, 1.9× for sixteen and more
// (BenchmarkDotQ4, AVX2). The
// b-side does not need the scan: Prepare runs beside it, holding a core
// of a Gate per stored node as the scan does. The factors are stored per
// generation (Factors, AParts) and reloaded with LoadPacker, or used where
// they are stored with LoadPackerPieces (a device's mapped pages, so that
// its memory does not grow with the packer): their layout is a function
// of the shape, only their values depend on H'.
//
// Why the keys go with every query, not once a client as the ring stage's
// Galois keys are. They cannot: the keys are under the query's LWE secret, and
// s must be fresh a query, because the public matrix A is fixed (H = D·A is
// precomputed) — two queries under one s differ by e − e' + Δ·(u − u'),
// which shows both columns. YPIR sends them with each query for the same
// reason. They are 11·3 polynomials of 2048 coefficients below Q, sent in
// the coefficient domain without their low bits — k + 3 bits at level k,
// which the levels above amplify the less the higher k is (see the
// noise): 380,160 bytes a query in PackV1 (456,192 untrimmed), 253,440 in
// PackV2. With a client-held
// long-term ring key instead,
// the server would first have to switch each row from s to it — per-query
// a-parts, nothing precomputable, the cost of the ring stage again.
//
// # Parameters and the 128-bit argument
//
// The ring has the LWE dimension N = 2048 (the ring secret is s itself),
// Q the largest prime ≡ 1 mod 4096 below 2^54, the keys' error the LWE
// error (centred binomial η = 82, σ = 6.4). The homomorphic encryption
// standard (Albrecht et al., "Homomorphic Encryption Standard", 2018, its
// table for ternary secrets, σ = 3.2) gives log q ≤ 54 for 128-bit
// security at N = 2048: Q is inside it and the error is twice the table's
// width. The secret is the one the LWE query already uses (ternary,
// P(0) = 1/2: a centred binomial of parameter 1, a little sparser than the
// table's uniform ternary). The same s also appears in the query's LWE
// samples modulo 2^32; rescaled to Q those are samples of error ≈ 2^22·σ,
// weaker than the keys', so they add nothing the estimator's choice of
// sample count does not already allow. Automorphism keys encrypt τ_k(s)
// under s: the circular-security assumption every RLWE rotation key, CDKS
// and YPIR make. The public a-parts are shared by all queries, whose
// secrets and errors are independent: independent RLWE instances with one
// public a. Checked against the table under one model
// (TestPackParamsNoWeakerThanStandard): the primal attack's smallest BKZ
// block size by the "2016 estimate" (Alkim, Ducas, Pöppelmann, Schwabe;
// USENIX Security 2016) with the secret scaled (Bai, Galbraith) is
// β = 344 for the keys against β = 337 for the standard's 128-bit entry
// (N = 2048, log q = 54, σ = 3.2, uniform ternary) — the wider error
// outweighs the sparser secret — and the test fails if a parameter change
// makes the keys the weaker. (Core-SVP, 0.292·β, gives 100 and 98: that
// model is more conservative than the table's.) The query's LWE at 2^32
// needs β = 710. Not covered: hybrid and dual attacks, which the lattice
// estimator would weigh; it was not run here (no Sage on this machine).
//
// # Noise: why decryption is exact
//
// In units of Q (threshold Q/512 = 2^45, half a step of 256 values):
//
//   - the scan's own noise, (D − 128)·e scaled by Q/2^32: σ = 2^40.4 at
//     2^19 columns of uniform bytes (2^18.4 modulo 2^32; 2^19.2 if every
//     byte were 0 or 255): the margin of SimplePIR's first dimension,
//     unchanged, σ shrinking by √2 for each halving of the columns;
//   - rounding the rows from 2^32 to Q: |r_b| ≤ 1/2 and ⟨r_a, s⟩ of
//     σ = √(N/2/12) ≈ 9;
//   - the packing: each key switching adds Σ_j g_j·e_j, digits uniform in
//     [−2^17, 2^17], σ_ks = √(3·N·2^34/3·41) = 2^25.2 for the keys' own
//     error (variance 41); a node's noise passes through every level above
//     it, doubling in variance for each child, so level k's weighs
//     4^(11−k) (var_root ≈ σ_ks²·4^11/3, σ = 2^35.4, untrimmed keys).
//     Trimming level k's keys adds a uniform error of variance
//     4^(k+3)/12 to theirs: each level then adds about 4^14/12·(σ_ks²/41)
//     to the root, the eleven together 5.3 times the untrimmed variance:
//     σ = 2^36.6. Measured at the default parameters
//     (TestPackedDefaultParams): σ = 2^36.6, largest of 12,288
//     coefficients 2^38.6 (untrimmed: 2^35.4 and 2^37.6).
//
// PackV2 (the default since session 21; PackParams): the packing's share
// of the above was the keys' trimming times digits of up to 2^17, and
// three digits of storage, products and key bytes a node. PackV2 rounds
// each decomposed x to a multiple of 2^22 and writes the rest in two
// digits of base 2^16, digit j weighing 2^(22+16j) in the keys. What the
// rounding leaves, |r| ≤ 2^21, is not switched and stays as r·τ(s):
// σ = 2^22/√12·√(N/2) = 2^25.2 a key switching, beside the two digits'
// √(2·N·2^32/3·41) = 2^23.9 — σ_ks = 2^25.4, a little more than PackV1's
// 2^25.2, but the trimming's error now multiplies digits of 2^15, not
// 2^17, and two of them: the eleven levels add a small fraction to the
// untrimmed root (σ ≈ 2^25.4·2^11/√3 = 2^35.6). Measured
// (TestPackedDefaultParams, both versions, one run): PackV1 σ = 2^36.6,
// largest of 12,288 coefficients 2^38.5; PackV2 σ = 2^35.6, largest 2^37.7.
// Other gadgets were measured the same way: one digit (of 2^24 or 2^26)
// does not decode; two of 2^20 after 14 rounded bits reach σ = 2^38.3,
// of 2^15 after 24 σ = 2^37.4, of 2^14 after 26 σ = 2^39.4; two of 2^16
// with the keys trimmed by k + 6 or k + 8 bits instead of k + 3, 2^37.2 and
// 2^39.2 for 5.6 KB less a query each bit. Nothing else changes: the keys
// are the same RLWE samples under s (only the gadget's powers differ), so
// the 128-bit argument above stands. A database keeps the version it was
// created with (its manifest says which; a request names it, wire version
// 7); a test pins each version's parameters, since they fix the stored
// layout.
//
// PackV2 also sends the query's words rounded to their high 28 bits (two
// words in 7 bytes: 12.5% less upload). The rounding is a public function
// of the LWE samples, so it shows nothing they do not; it adds to each
// column an error uniform in [−8, 8), σ = 4.6 beside the LWE error's 6.4,
// which the scan carries like the LWE error. Measured at 2^20 columns
// (TestQueryRoundingNoise, 32 rows × 3 queries, modulo 2^32): σ = 2^18.8
// with 32-bit words, 2^19.5 with 28-bit ones, the largest of 96 2^21.1,
// against a threshold of 2^23: 11 σ at the widest matrix, about 16 σ at
// the default 2^19 columns.
//
// PackV3 (the default since session 22; pack_twokeys.go): the packing of
// InsPIRe (Akhavan Mahdavi, Patel, Seo and Yeo, "InsPIRe: Communication-
// Efficient PIR with Server-side Preprocessing", 2025). The tree's levels
// become a trace over the Galois group evaluated as two Horner chains of
// τ_5 and one τ_(−1): two automorphism keys instead of eleven, and every
// switching's error is added once at the root (carried there by
// automorphisms, which keep its size) rather than doubled at each level
// above it. That sum of N − 1 switchings, σ ≈ σ_ks·√N, against the tree's
// σ_ks·2^11/√3, leaves room for one digit and a smaller Q: Q < 2^52, so
// that AVX-512 IFMA multiplies a factor by a key in one instruction pair
// (dot52.go); x rounded to a multiple of 2^27 and written in one digit of
// base 2^25 (|d| ≤ 2^24): σ_ks = √(N·(2^25²/12·41 + 2^27²/12/2)) = 2^31.7
// a switching, σ ≈ 2^37.2 at the root. Measured (TestPackedDefaultParams,
// same run as above): σ = 2^37.0, the largest of 12,288 coefficients
// 2^38.9, against a threshold of Q/512 = 2^43. Every figure in units of
// Q scales with Q, so the scan's noise is 2^38.4 here and the sum below
// keeps its margin: σ ≈ 2^38.8, the threshold 2^4.2 ≈ 18 σ away. The keys
// are two polynomials of 2048 untrimmed 52-bit coefficients: 26,624 bytes
// a query (PackV2: 253,440). A pack of γ rows (a power of two) stores γ − 1
// digit polynomials (32 MiB at γ = N = 2048; PackV2 64 MiB) and a query
// multiplies each once: half
// PackV2's products (BenchmarkPackAbsorb, one query's Prepare at 2048 rows
// on the Zen 4 core of session 22: PackV2 8.3 CPU ms; PackV3 4.1 with the
// AVX2 limbs at Q < 2^54, 2.8 with IFMA at Q < 2^52). Security: the same
// ring, error and secret as PackV1 and PackV2, a smaller Q (the standard's
// bound is an upper one), and keys of the same form (K0 = K1·s + e −
// w·τ(s), τ an automorphism, K1 public from the seed), two of them
// instead of eleven: the argument above stands. The query words are
// PackV2's 28 bits.
//
// Sum: σ ≈ 2^40.4, the threshold 2^4.6 ≈ 24 σ away (17 σ at 2^20
// columns, the ceiling MaxLogCols allows, as for the LWE scheme alone):
// with Gaussian tails, below 2^−200 an entry.
//
// # The download: modulus switching
//
// The root's a-part (query-independent) is rounded to 2^21 at load time,
// each answer's b-part to 2^16. The client computes a·s exactly (the
// LWE ring's 61-bit prime), takes it modulo 2^21, rounds it to 2^16 and
// subtracts: the rounding adds at most 1/2 + 1/2 and a term of
// σ = 9/2^5 ≈ 0.3 to the noise, which is 2^2.4 ≈ 5.3 in units of 2^16 at
// 2^19 columns against a threshold of 128. A pack is 2048·(21 + 16) bits
// = 9,472 bytes; the a-part is the same in every answer of a generation
// (a client could keep it: 5,376 bytes, then 4,096 bytes an answer).
//
// # Costs and what a batch shares
//
// Per pack of N rows: stored, (N − 1)·Digits NTT-domain polynomials, 96 MiB
// at N = 2048 in PackV1, 64 MiB in PackV2, 32 MiB in PackV3 (so, in PackV1, 96 MiB a GiB at
// 2048 rows, 384 MiB at 8192 rows — more than
// the ring stage's 64 MiB of diagonals at 1 GiB; their layout depends on
// the shape alone, their values on H'), computed in about a second of CPU
// a pack here; per query, Digits·(N − 1)·N products and N/2^Absorb − 1
// merges. A
// batch (Prepare with several queries' keys) reads each node's factors
// once for all its queries, so they cross the memory bus once a batch;
// the products cannot be shared (each query's keys are its own), and they,
// not the memory, bound a batch: a batch costs per query what one query
// costs in the products (about 1.1 ns a product on this machine's AVX2
// core), and saves the reading. A device takes a batch in one request of
// up to 32 queries (devicepb.LWEQueryRequest.more: a keyword lookup's
// columns). A query in Prepare holds, with the tree, its keys in every
// variant the nodes use (at 2048 rows PackV1 66 polynomials, PackV2 74:
// 1.2 MiB) and its partial sums (256 KiB); with two keys (PackV3), its
// keys in orbit order (48 KiB) and one sum (16 KiB). Taller
// layouts shorten the query vector (3.5 bytes a
// column in PackV2, 4 in PackV1) and lengthen the packing (one pack per N
// rows): at 1 GiB in PackV3, 2048 rows send 1.86 MB up, 4096 rows 0.94 MB,
// 8192 rows 0.49 MB (NewShapeCols), for 2× and 4× the packing; a packed-only
// generation may take up to MaxPackedRows (8 GiB: 16,384 rows, 1.86 MB).
// Figures:
// BENCHMARKS.md, "Packing the answer instead of H·s".
package lwepir
