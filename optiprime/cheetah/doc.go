// Package cheetah is a thin Cheetah-style RLWE scheme with a power-of-two
// plaintext modulus t = 2^ℓ (1 ≤ ℓ ≤ 45) and coefficient encoding, as used by
// the hybrid HE-MPC linear-layer protocols in optiprime/linear.
//
// Lattigo's BGV requires t ≡ 1 mod 2N, which rules out t = 2^ℓ, so the scheme
// is built directly on Lattigo v6 core/rlwe and ring: keys, the secret- and
// public-key encryptors, the decryptor, NTT arithmetic, automorphisms and key
// switching (Galois keys) are Lattigo's. This package adds only what is
// specific to t = 2^ℓ:
//
//   - Encoding. A polynomial m with coefficients in [0, t) is encoded at a
//     level with modulus q as round(q·m/t) coefficient-wise (the "precise"
//     BFV scaling, not floor(q/t)·m). The phase of every ciphertext is then
//     (q/t)·M + E where M is an integer polynomial and E the noise, so a
//     plaintext-ciphertext product keeps that form exactly: (q/t)·(M·w) +
//     E·w, and the multiples of t in M·w vanish because (q/t)·t·K = q·K ≡ 0.
//     With floor(q/t)·m there would be an extra error (q mod t)·K of size up
//     to t·N·‖w‖, which for t = 2^ℓ would eat ℓ bits of budget.
//   - Decoding: m = round(t·phase/q) mod t, correct while ‖E‖∞ < q/(2t).
//   - A worst-case noise bound (type Bound) that every operation updates
//     (plaintext products by the plaintext's ℓ1 norm, automorphisms by the
//     key-switching bound, sums additively), so
//     a server can size noise flooding, the output level and the number of
//     low bits it may drop without ever decrypting.
//   - Re-randomization: the server adds a fresh public-key encryption of zero
//     (so the c1 part no longer depends on its weights) and flooding noise
//     drawn uniformly from [-2^F, 2^F] with F = λ + log2(bound) (statistical
//     distance ≤ 2^-λ per coefficient for the weight-dependent noise).
//   - Compression before sending (Cheetah's trick): modulus switching down
//     to the lowest level at which the bound still fits, keeping only the
//     c0 coefficients the receiver will read, and dropping d0 low bits of c0
//     and d1 low bits of c1 (Rounding errors ≤ 2^(d0-1) + N·2^(d1-1), within
//     the remaining budget by construction). See [Compressed].
//   - Seeded input ciphertexts: the client's symmetric ciphertexts send c0
//     and a 32-byte seed from which c1 is regenerated.
//
// Evaluators, encryptors and decryptors are not safe for concurrent use
// (Lattigo's buffers); use one per goroutine.
//
// Presets (HE-standard 128-bit rows for ternary secrets: logN 12 → logQP ≤
// 109, 13 → 218, 14 → 438, 15 → 881) are listed in presets.go.
package cheetah
