// Package rns holds the RNS limb kernels every Rosemary engine is built from:
// one limb is N coefficients modulo one prime q, and every FHE operation
// reduces to the kernels here — forward and inverse negacyclic NTT,
// automorphisms in the NTT domain, element-wise modular arithmetic and RNS
// base conversion.
//
// The kernels are bit-compatible with Lattigo v6's ring package: the NTT uses
// the same 2N-th root ψ = g^((q−1)/2N) with g the smallest primitive root
// ≥ 3, the same bit-reversed output order, Montgomery constants with R = 2^64,
// and base conversion reproduces Lattigo's floating-point overflow estimate so
// that its outputs agree to the bit. Canonical (fully reduced) outputs are
// identical to Lattigo's; the *Lazy variants return values in [0, 2q)
// congruent to them.
//
// Each kernel has a portable Go implementation. On amd64 with AVX-512
// (F/DQ/VL/BW) the hot kernels run in assembly, chosen at run time with
// golang.org/x/sys/cpu: with IFMA52 and a prime below 2^50, the NTT/INTT,
// Montgomery/Barrett/scalar products, MAC, Reduce and base conversion use
// 52-bit multiply-accumulate; for larger primes (below 2^62), or without
// IFMA, the same kernels use AVX-512F/DQ arithmetic (64-bit products from
// 32-bit pieces); add, sub, neg, scalar add/sub and automorphism
// permutations use AVX-512F for every prime. The assembly relies on the documented input ranges (for instance
// canonical inputs to MulMont; NTT inputs below 4q). Building with
// -tags purego, or calling SetPureGo(true), selects the Go code everywhere;
// tests run both and require identical canonical outputs.
//
// NewNTTTableLean builds a table with only what the IFMA NTT reads (2N words
// per direction instead of NewNTTTable's 8N to 14N) for memory-bound users
// such as the edge encryptor; Retarget refills it for another prime of the
// same degree without allocating, so one table can serve the limbs of a
// ciphertext in turn. Its transforms are bit-identical to the full table's.
package rns
