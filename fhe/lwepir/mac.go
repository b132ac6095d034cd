package lwepir

import (
	"math/bits"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// macGroup is how many products a 128-bit sum holds before its Montgomery
// reduction: for q < 2^61, 8·q² < q·2^64, the bound under which one
// reduction lands in [0, 2q).
const macGroup = 8

// dotMont sets acc[i] += Σ_j ds[j][i]·bs[j][i]·2^{-64} mod q for the slots
// of acc (every word below q < 2^61), the value of rns.MACMontSum. Where
// fhe/rns has no vector kernel it is the ring stage's inner loop, and this
// order is 2–3× faster in Go than rns's slot-major one: each product
// streams two slices side by side into 128-bit accumulators hi, lo (of
// acc's length, scratch) instead of gathering a slot's terms from B1
// slices, and one reduction serves a group of macGroup products.
func dotMont(ds, bs [][]uint64, acc, hi, lo []uint64, m *rns.Modulus) {
	if len(ds) != len(bs) {
		panic("lwepir: a dot product of unequal term counts")
	}
	if useRNSSum || m.Q >= 1<<61 {
		rns.MACMontSum(ds, bs, acc, m)
		return
	}
	n := len(acc)
	hi, lo = hi[:n], lo[:n]
	q, mr := m.Q, m.MRedConst
	for len(ds) > 0 {
		g := min(len(ds), macGroup)
		clear(hi)
		clear(lo)
		for j := range g {
			d, b := ds[j][:n], bs[j][:n]
			for i := range n {
				h, l := bits.Mul64(d[i], b[i])
				var c uint64
				lo[i], c = bits.Add64(lo[i], l, 0)
				hi[i] += h + c
			}
		}
		for i := range n {
			// Montgomery reduction of the group's sum, into [0, 2q), then
			// canonical, then added.
			h, _ := bits.Mul64(lo[i]*mr, q)
			r := hi[i] - h + q
			if r >= q {
				r -= q
			}
			r += acc[i]
			if r >= q {
				r -= q
			}
			acc[i] = r
		}
		ds, bs = ds[g:], bs[g:]
	}
}

// useRNSSum is true where fhe/rns multiplies with vector instructions:
// its kernel is then the faster.
var useRNSSum = rns.KernelPath("mac", 60) != "purego"
