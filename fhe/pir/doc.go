// Package pir is the client side and a host-only reference server of a
// single-server private information retrieval (PIR) protocol on BGV with a
// compressed query: the client sends one coefficient-encoded ciphertext and
// the server expands it into the row and column selection vectors with
// Galois automorphisms, the query-expansion technique of SealPIR (Sebastian
// Angel, Hao Chen, Kim Laine, Srinath Setty, "PIR with Compressed Queries
// and Amortized Query Processing", IEEE Symposium on Security and Privacy
// (S&P) 2018).
//
// The database is two-dimensional: Shape.Rows × Shape.Cols BGV plaintexts,
// each holding N 16-bit little-endian chunks of record bytes as its
// coefficients (2N bytes, below the plaintext modulus t = 65537). The
// protocol, level by level ("top" = params.MaxLevel(), which must be ≥ 2):
//
//   - Query (top): coefficient 2·bitrev(r) = (2·Rows)⁻¹ mod t and coefficient
//     1 + 2·bitrev(c) = (2·Cols)⁻¹ mod t, encrypted with the secret key.
//   - Expansion (top): a binary tree whose children of a depth-j node x are
//     x + Aut_{g_j}(x) (branch 0) and (x − Aut_{g_j}(x))·X^{−2^j} (branch 1),
//     g_j = N/2^j + 1. The leaf reached by the bits of a coefficient index
//     encrypts 2^depth times that coefficient as a constant, i.e. exactly 1
//     for the selected row/column and 0 for the others. Leaves are produced
//     depth-first, keeping O(depth) ciphertexts per traversal.
//   - Every selection is rescaled once (top → top−1).
//   - Scan (top−1): rowSum_r = Σ_c colSel_c × pt_{r,c} (plaintexts lifted
//     from their compact form with fhe.LiftCompactBGV).
//   - Row product (top−1): Σ_r Relinearize(rowSum_r ⊗ rowSel_r), then one
//     rescale: the answer, at level top−2.
//
// Server is a Lattigo-only reference evaluator of exactly this computation
// (deterministic, bit-identical for any number of workers); device
// implementations are compared with it ciphertext for ciphertext.
//
// Noise (bgv-13: N=2^13, three 49-bit Q primes, t=65537), measured by the
// tests as log2(Q_l/2) − log2‖t·(c0+c1·s) mod Q_l‖∞: the answer keeps
// ≈ 21 bits of budget at Rows=4, Cols=256 and 16.9 bits at the largest
// shape, Rows=2048, Cols=256 (see noise_test.go).
package pir
