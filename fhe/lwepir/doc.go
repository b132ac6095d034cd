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
package lwepir
