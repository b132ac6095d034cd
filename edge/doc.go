// Package edge is the RISE edge encryptor: a lean CKKS encoder, public-key
// and seeded symmetric encryptor and a decryptor that run on a small device
// without Lattigo, together with the pieces the RISE paper
// (../shared/papers/003_0c1295d2c2f24597.txt) builds in hardware.
//
// The randomness is a SHAKE256 stream in counter mode (PRNG): block i of a
// stream is SHAKE256(seed ‖ stream ‖ i), 272 bytes (two Keccak rates, 2×1088
// bits). The samplers draw from it: a centered binomial with k = 21 for errors,
// a ternary sampler by byte rejection (accept r < 255) followed by a
// constant-time reduction mod 3 for the secrets u and s, and a uniform
// sampler mod q by rejection. None branches on or indexes by a secret value.
//
// The NTT is negacyclic over 30-bit primes (any q < 2^62 works), in place,
// with its twiddles either precomputed in a table (Shoup form) or computed on
// the fly from log N root registers (Montgomery form), the latter being the
// RISE design point. Its output is bit-identical to Lattigo v6's ring NTT:
// same 2N-th root ψ = g^((q-1)/2N) with g the smallest primitive root ≥ 3 of q,
// and the same bit-reversed output order.
//
// Encryption streams limb by limb and in place through two bank-sized
// buffers (the paper's two bank groups BG0 and BG1): the encoded message plus
// e0 lives in one as signed 64-bit integers for the whole ciphertext, and the
// other holds NTT(u mod q_i) for the limb in flight; the output ciphertext
// limbs are the NTT scratch. Steady-state encryption allocates nothing.
// Ciphertexts are in the NTT domain in standard (non-Montgomery) form, the
// layout Lattigo's CKKS ciphertexts use, so Lattigo decrypts them; a Lattigo
// public key is imported once with ImportPublicKey.
//
// The video helpers pack 8-bit grayscale frames into the real slots of
// ciphertexts, log2(q0) bits per slot as in the paper's section II-D, and
// restore them exactly after decryption.
//
// The bank-conflict schedules of the paper's NTT_swap2 / NTT_swap4 live in
// the subpackage edge/nttsched.
package edge
