package lwepir

import "math/bits"

// The absorbed subtrees' dot products (dotMontTerms) are nine tenths of a
// query's packing and stream the packer's factors once each: at 2048 rows
// 94 MB a query, one product a word. In Go a product is a 64×64 → 128-bit
// multiplication and a 128-bit addition, about four cycles on this
// machine's core (Zen 1, 2 GHz). AVX2 has no such multiplication, but it
// multiplies four pairs of 32-bit words at once (VPMULUDQ), so with every
// word below 2^54 split in two 27-bit limbs, p = p1·2^27 + p0, the
// products' sums, kept apart by weight,
//
//	A0 = Σ p0·k0,  A2 = Σ p1·k1,  M = Σ (p0 + p1)·(k0 + k1),
//
// stay exact in 64 bits for up to dot27MaxTerms terms (for q < 2^54), and
// A0 + (M − A0 − A2)·2^27 + A2·2^54 is the 128-bit sum that one Montgomery
// reduction brings back below q, as in the Go kernel. Karatsuba's middle
// product makes it three limb multiplications a product, not four: on a
// core that splits a 256-bit multiplication in two halves on one port,
// the multiplications are what bounds the kernel.

// dot27MaxTerms bounds the terms of one reduction: M gains a product below
// 2^56 a term and must stay below 2^64 (255·2^56 < 2^64); the 128-bit sum
// stays below 255·q² < q·2^64 (q < 2^54), which a Montgomery reduction
// needs.
const dot27MaxTerms = 255

// dot27Fits reports whether the limb kernels compute dotMontTerms for
// these operands: the CPU runs them, q < 2^54, the terms are
// few enough and the length is a multiple of 4.
func dot27Fits(n, terms int, q uint64) bool {
	return useDot27 && q>>54 == 0 && terms <= dot27MaxTerms && n%4 == 0
}

// dotMontTerms27 is dotMontTerms with the limb kernels (dot27Fits must
// hold): block by block, three terms a call, one reduction a coefficient.
func dotMontTerms27(out []uint64, ps, ks [][]uint64, q, mred uint64) {
	var acc [3 * dotBlock]uint64 // on the stack: a call a node a query
	for b0 := 0; b0 < len(out); b0 += dotBlock {
		b1 := min(b0+dotBlock, len(out))
		m := b1 - b0
		a := acc[:3*m]
		clear(a)
		t := 0
		for ; t+3 <= len(ps); t += 3 {
			dot27x3(&a[0], m, &ps[t][b0], &ps[t+1][b0], &ps[t+2][b0], &ks[t][b0], &ks[t+1][b0], &ks[t+2][b0])
		}
		for ; t < len(ps); t++ {
			dot27x1(&a[0], m, &ps[t][b0], &ks[t][b0])
		}
		reduce27(out[b0:b1], a[:m], a[m:2*m], a[2*m:3*m], q, mred)
	}
}

// reduce27 sets o[i] to the 128-bit sum a0 + (a1 − a0 − a2)·2^27 + a2·2^54
// of a coefficient's limb sums, Montgomery-reduced below q.
func reduce27(o, a0, a1, a2 []uint64, q, mred uint64) {
	a0, a1, a2 = a0[:len(o)], a1[:len(o)], a2[:len(o)]
	for i := range o {
		mid := a1[i] - a0[i] - a2[i] // Σ p0·k1 + p1·k0: exact, below 2^64
		lo, c := bits.Add64(a0[i], mid<<27, 0)
		hi := mid>>37 + c
		lo, c = bits.Add64(lo, a2[i]<<54, 0)
		hi += a2[i]>>10 + c
		o[i] = montReduce(hi, lo, q, mred)
	}
}
