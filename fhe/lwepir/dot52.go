package lwepir

import "math/bits"

// With a packing modulus below 2^52 (PackV3), AVX-512 IFMA multiplies
// whole words: VPMADD52LUQ and VPMADD52HUQ add the low and the high 52
// bits of each 104-bit product to two 64-bit sums, L and H, and
// L + H·2^52 is the 128-bit sum one Montgomery reduction brings back below
// q. Two instructions a product, eight lanes each, where the 27-bit limbs
// of dot27.go take three multiplications (and their splitting) on four.
// The sums stay exact for up to 2^12 terms (each adds below 2^52), and the
// reduction's high word stays below q while terms·q < 2^64.

// dot52Fits reports whether the IFMA kernels compute dotMontTerms for
// these operands: the CPU runs them, q < 2^52, terms·q < 2^64 and the
// length is a multiple of 8.
func dot52Fits(n, terms int, q uint64) bool {
	return useDot52 && q>>52 == 0 && terms < 1<<12 && uint64(terms) <= (1<<64-1)/q && n%8 == 0
}

// dotMontTerms52 is dotMontTerms with the IFMA kernels (dot52Fits must
// hold): block by block, four terms a call, one reduction a coefficient.
func dotMontTerms52(out []uint64, ps, ks [][]uint64, q, mred uint64) {
	var l, h [dotBlock]uint64
	for b0 := 0; b0 < len(out); b0 += dotBlock {
		b1 := min(b0+dotBlock, len(out))
		m := b1 - b0
		clear(l[:m])
		clear(h[:m])
		t := 0
		for ; t+4 <= len(ps); t += 4 {
			dot52x4(&l[0], &h[0], m, &ps[t][b0], &ps[t+1][b0], &ps[t+2][b0], &ps[t+3][b0], &ks[t][b0], &ks[t+1][b0], &ks[t+2][b0], &ks[t+3][b0])
		}
		for ; t < len(ps); t++ {
			dot52x1(&l[0], &h[0], m, &ps[t][b0], &ks[t][b0])
		}
		o := out[b0:b1]
		for i := range o {
			lo, c := bits.Add64(l[i], h[i]<<52, 0)
			o[i] = montReduce(h[i]>>12+c, lo, q, mred)
		}
	}
}
