// Package edge is the RISE edge encryptor: a lean CKKS encoder, public-key
// and seeded symmetric encryptor and a decryptor that run on a small device
// without Lattigo, together with the pieces the RISE paper
// (Azad et al., "RISE: RISC-V SoC for En/decryption Acceleration on the
// Edge for Homomorphic Encryption", IEEE) builds in hardware.
//
// The randomness is a SHAKE256 stream in counter mode (PRNG): block i of a
// stream is SHAKE256(seed ‖ stream ‖ i), 272 bytes (two Keccak rates, 2×1088
// bits). The samplers draw from it: a centered binomial with k = 21 for errors,
// a ternary sampler by byte rejection (accept r < 255) followed by a
// constant-time reduction mod 3 for the secrets u and s, and a uniform
// sampler mod q by rejection. None branches on or indexes by a secret value.
//
// The NTT is negacyclic over 30-bit primes (any q < 2^62 works), in place,
// with its twiddles either precomputed in a table (TableNTT, Shoup form, 4
// words per coefficient) or computed on the fly from the log N+1 root
// registers ψ^(2^s) (FlyNTT, the RISE design point: O(log N) words). For
// q < 2^40 the forward transform runs fully lazy radix-4 passes (no
// reduction until the end); the on-the-fly variant derives each block's
// twiddles from a binary counter over the block index (one product per
// block) and shares one twiddle generation across the three transforms of a
// limb (Forward3), as RISE's BFUs share one twiddle unit. Output is
// bit-identical to Lattigo v6's ring NTT and to the rns package's: same
// 2N-th root ψ = g^((q-1)/2N) with g the smallest primitive root ≥ 3 of q,
// same bit-reversed order.
//
// The transforms and products take one of four paths (NTTPath, chosen with
// WithPath; DefaultPath picks): PathFly, the on-the-fly NTT above (the RISE
// hardware's algorithm, and the default on riscv64 and on CPUs without
// AVX-512 IFMA); PathTable, the same with stored tables; and the two rns
// paths, which run the rns package's AVX-512 IFMA NTT and Montgomery
// multiply-accumulate kernels (the default where they run; rns has no
// Lattigo dependency). The rns kernels read precomputed twiddles, so
// PathRNS gives each encryptor (and decryptor) one lean table of 2N words
// (rns.NewNTTTableLean: twiddles and 52-bit Shoup companions in the
// kernels' layout, nothing else) and refills it for each limb as the limb
// streams through (rns.NTTTable.Retarget, ~2N modular products); the
// context keeps only per-prime table headers. PathRNSShared instead builds
// one lean forward table per prime at setup (2N words per limb, no refill).
// On the rns paths the key limbs are held in 64-bit Montgomery form (the
// form rns.MACMont takes) instead of the 32-bit one. Every path gives
// bit-identical ciphertexts for the same randomness (tested).
//
// Encryption streams limb by limb and in place through two bank-sized
// buffers (the paper's two bank groups BG0 and BG1): the encoded message plus
// e0 lives in one as signed 64-bit integers for the whole ciphertext (the
// encoder's complex FFT runs inside the same buffer), and the other holds
// NTT(u mod q_i) for the limb in flight; the output ciphertext limbs are the
// NTT scratch, and u and e1 are kept as N bytes each. Steady-state
// encryption allocates nothing; Encryptor.WorkingBytes reports the buffers
// (and the PathRNS table), Context.TwiddleBytes the context's NTT state.
// Symmetric encryption (SymEncryptor) draws c1 = a from a fresh public seed
// so only c0 and the seed are uploaded; Context.ExpandSeeded regenerates c1
// on the server, limb by limb.
// Ciphertexts are in the NTT domain in standard (non-Montgomery) form, the
// layout Lattigo's CKKS ciphertexts use, so Lattigo decrypts them; a Lattigo
// public key is imported once with ImportPublicKey.
//
// Video frames (packing into slots, YUV4MPEG2 files, encrypted video
// directories) are rise/video; the bank-conflict schedules of the paper's
// NTT_swap2 / NTT_swap4 are rise/nttsched; the measurement against Lattigo
// behind `rosemary edge bench` is tools/bench/edgebench. Nothing in the edge tree
// imports Lattigo outside tests.
package edge
