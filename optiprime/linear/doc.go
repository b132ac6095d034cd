// Package linear holds the HE linear-layer protocols of the hybrid HE-MPC
// private inference (OptiPrime, with Cheetah as the baseline): convolution
// and fully-connected layers on additive shares mod 2^ℓ.
//
// The client holds ⟨X⟩c and the secret key; the server holds ⟨X⟩s, the
// weights and the client's public and Galois keys. The client sends seeded
// encryptions of its share; the server adds its share, evaluates W·⟦X⟧,
// subtracts a uniformly random R, re-randomizes (fresh encryption of zero +
// noise flooding) and returns compressed ciphertexts (level 0, only the
// coefficients the client reads, low bits dropped). The client's output
// share is the decryption, the server's is R (plus any fused bias).
//
// Three protocols share one plan (tiling, noise bound, wire sizes) and one
// schedule; the schedule runs either on the real evaluator or on a counting
// engine, so the counters reported for a layer (output/input ciphertexts,
// automorphisms, plaintext-ciphertext products, bytes each way) are those of
// the code that runs, not a separate formula:
//
//   - Cheetah: HomConv after Huang et al. (USENIX Security 2022). The padded
//     input is cut into blocks of Cb channels × Hb × Wb (Cb·Hb·Wb ≤ N,
//     overlapping by the kernel size), encoded channel-major; kernels are
//     encoded reversed so that the stride-1 convolution of a block appears at
//     coefficients O + i·Wb + j. One output ciphertext per output channel and
//     spatial block. Strides are handled by keeping every s-th output.
//     Fully-connected layers use Cheetah's matrix-vector packing.
//   - OptiEncode: channel encoding. Channels are the innermost dimension
//     (coefficient (i·Wb+j)·C + c, C a power of two), so the useful results
//     of one output channel sit at multiples of C. C output ciphertexts are
//     then merged into one: a tree of C−1 automorphisms τ_j = X→X^(N/2^j+1)
//     with monomial shifts X^(2^j) computes Σ_i X^i·Tr(y_i), where the trace
//     Tr over {σ_g : g ≡ 1 mod 2N/C} zeroes every coefficient not ≡ 0 mod C
//     and multiplies the rest by C. As C is not invertible mod 2^ℓ, inputs
//     are encrypted for t' = 2^(ℓ+log2 C); carries of the shares vanish
//     (C·2^ℓ ≡ 0 mod t') and the client divides the result by C exactly.
//   - OptiEncode-BSGS: the trace is moved onto the inputs,
//     Σ_i X^i Tr(Σ_g ct_g K_ig) = Σ_m Σ_g σ_{γ^m}(ct_g)·P_mg with
//     P_mg = Σ_i X^i σ_{γ^m}(K_ig) precomputed (constant-weight terms), and
//     the geometric progression γ^m (γ generates the order-C subgroup) is
//     split baby-step/giant-step: m = uB+v, automorphisms σ_{γ^v} on the
//     inputs (shared by all output groups) and σ_{γ^{uB}} once per giant
//     step, with plaintexts σ_{γ^{-uB}}(P) precomputed. It keeps
//     OptiEncode's layout (same communication); B is the power of two with
//     the fewest automorphisms whose noise still fits 40-bit flooding, and a
//     layer where no split fits or saves anything keeps the merge tree (this
//     is the case for every layer at N = 4096 with its 109-bit modulus).
//
// Security: semi-honest. The server's reply is re-randomized (fresh
// public-key encryption of zero plus flooding 2^λ above the worst-case noise
// bound, λ = 40 by default), masked by R uniform mod 2^ℓ on all N
// coefficients, and only the coefficients the client reads are sent.
// Weights must respect a public bound (Options.WeightBits), which sizes the
// flooding.
package linear
