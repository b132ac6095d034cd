// Package ot implements oblivious transfer for semi-honest two-party
// computation: a base OT over elliptic-curve Diffie–Hellman, IKNP OT
// extension, silent correlated-OT generation (Ferret), and on top of either
// chosen-message 1-out-of-2 OT on ℓ-bit strings, additively correlated OT
// mod 2^ℓ, random OT, and 1-out-of-N OT.
//
// # Base OT
//
// Base OTs follow Chou and Orlandi, "The Simplest Protocol for Oblivious
// Transfer" (LATINCRYPT 2015), in its random-OT form over NIST P-256: the
// sender publishes A = aG; for each OT the receiver with choice c sends
// B = bG + c·A; the sender's keys are k0 = H(a·B), k1 = H(a·(B−A)) and the
// receiver's is k_c = H(b·A). All scalar multiplications by secret scalars
// use crypto/ecdh (constant time). crypto/ecdh exposes no point addition,
// which every DH-based OT needs (B = bG + A), so the two additions use the
// deprecated crypto/elliptic P-256 Add, which is backed by the same
// constant-time nistec code; X25519 was not used because it offers no
// addition at all and its public keys are distinguishable from random strings
// (curve vs twist), which would leak the choice in any "oblivious key" variant.
//
// Caveats: security is semi-honest, in the random-oracle model (H is SHA-256
// with the OT index, choice bit, A and B in the input), under CDH in P-256.
// The original paper's UC proof against malicious parties was found to be
// flawed (Genç, Iovino, Rial, ePrint 2017/1135; Hauck, Loss, ePrint
// 2017/1011); we claim nothing beyond semi-honest security. All OTs of a batch
// share one A, so the sender's a is fresh per batch and never reused.
//
// # OT extension
//
// IKNP (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003) with κ = 128 base OTs in
// the reverse direction. The extension receiver (base-OT sender) holds 128
// key pairs, expands each key with a SHAKE128 stream (share.PRG) into columns
// t^i = G(k_i^0), sends u^i = t^i ⊕ G(k_i^1) ⊕ r for its choice vector r; the
// extension sender with random s ∈ {0,1}^128 forms q^i = G(k_i^{s_i}) ⊕ s_i·u^i,
// so that after transposing, row q_j = t_j ⊕ r_j·s. Keys are
// H(j, q_j) and H(j, q_j ⊕ s) for the sender and H(j, t_j) for the receiver,
// with H(j, x) = π(π(x) ⊕ j) ⊕ π(x), π fixed-key AES-128: the tweakable
// correlation-robust hash of Guo, Katz, Wang, Weng and Yu (IEEE S&P 2020),
// tweaked by the global OT index j (see crhBlocks for why it suffices). Streams continue across calls, and the index
// keeps counting, so both parties must make the same calls in the same order.
//
// # Derived OTs
//
//   - SendChosen/ReceiveChosen: the sender sends m0 ⊕ H0, m1 ⊕ H1 (ℓ ≤ 64 bits).
//   - SendCorrelated/ReceiveCorrelated: the sender's output x is H0 mod 2^ℓ
//     and it sends x + Δ − H1, so the receiver gets x + c·Δ (half the traffic).
//   - SendN/ReceiveN: 1-out-of-2^k OT from k random OTs after Naor and
//     Pinkas (SODA 2001): message v is masked with H(instance, v, K_1^{v_1},
//     …, K_k^{v_k}); the receiver knows exactly the keys of its choice, so
//     every other mask contains a key it lacks.
//
// # Silent OT (Ferret)
//
// NewSilentSender/NewSilentReceiver fill a pool of correlated OTs
// (the receiver holds M_j = K_j ⊕ x_j·Δ for random x_j, the sender K_j and
// Δ = its IKNP s) with Ferret's primal-LPN iteration (Yang, Weng, Lan,
// Zhang, Wang, "Ferret: Fast Extension for coRRElated oT with small
// communication", CCS 2020), semi-honest form: from k + t·h pooled OTs,
// t single-point COTs over GGM trees of 2^h leaves (the receiver learns
// every leaf but its noise position α_i, the sender's leaf there is offset
// by Δ; h OTs per tree carry the level sums, one correction per tree fixes
// the punctured leaf) give a regular noise vector e, and a public local
// linear code A (10 nonzeros per row, drawn from fixed-key AES-CTR) gives
// n = t·2^h new OTs x = A·u ⊕ e, M = A·M' ⊕ w, K = A·K' ⊕ v. The first
// k + t·h outputs are kept for the next iteration. Parameters are emp-ot's:
// regular (n, k, t, h) = (10,608,640, 589,824, 1,295, 13), ≈ 10 M OTs for
// 0.56 MB; small (649,728, 36,288, 1,269, 9), which bootstraps the regular
// set from 47,709 IKNP OTs. A request then costs one bit per OT (the
// receiver sends c_j ⊕ x_j; the sender sets q_j = K_j ⊕ d_j·Δ), so every
// derived OT above runs unchanged at a fraction of IKNP's traffic; the
// receiver's tree rebuild indexes memory by its own α (a local timing
// channel on the receiver's machine only, as in emp-ot).
//
// 1-out-of-16 OT over the silent source uses the Naor–Pinkas construction
// (SendN/ReceiveN): 4 bits from the receiver and 16 masked messages. When an
// instance's messages fit one key they are masked by key slots (slotPad),
// and when they fit one 64-bit word in whole bytes (the millionaires'
// leaves: 16 × 2 bits) ReplyNPacked masks the whole word at once and
// FinishN unmasks it with one shift — the same bytes on the wire.
//
// # Fixed-key AES
//
// π, the fixed-key AES-128 permutation of the GGM trees and of the hash H
// above, runs many blocks per call (fixedAES): on amd64 with AES-NI an
// assembly kernel keeps eight independent blocks in flight, elsewhere
// crypto/aes runs them one by one (same outputs; tests compare the two and
// FIPS 197's known answer). (Until
// silent OT existed here, the nonlinear package used the KK13 1-out-of-N
// extension, 32 bytes per instance; it was removed with IKNP's u matrices
// from the protocols.)
//
// Each call is two flights: the receiver's u matrix, then the sender's
// masked messages (random OT is one flight).
package ot
