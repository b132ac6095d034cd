package edge

import "github.com/rosemary-fhe/rosemary/fhe/rns"

// Fully lazy butterflies for q < 2^40 (covering the 27/30-bit edge primes):
// no reduction inside the transform at all. Forward (Cooley-Tukey, radix-4
// passes in ntt_radix4.go) outputs grow by at most 3q per stage, so after
// log N ≤ 16 stages values stay below 49q; inverse (Gentleman-Sande) sums
// double per stage, staying below 2^17·q.
// Both bounds fit 64-bit words for q < 2^40, and Shoup / Montgomery
// products accept such inputs. One Barrett reduction per coefficient at the
// end brings the result into [0, q).

const lazyLimit = 1 << 40

func (t *TableNTT) inverseLazy(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	b := q // bound on inputs of the current stage
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		for i := 0; i < m; i++ {
			w, ws := t.iw[m+i], t.iws[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				x[j] = u + v
				y[j] = rns.MulShoupLazy(u-v+b, w, ws, q)
			}
		}
		b *= 2
	}
	for j := range p {
		p[j] = condSub(rns.MulShoupLazy(p[j], t.nInv, t.nInvS, q), q)
	}
}

// approxShoup returns a Shoup quotient for 1 ≤ w < q < 2^40 that is at
// most 2^15 below floor(w·2^64/q) and never above it: one float
// multiplication instead of a 128-by-64-bit division (c = 2^63/q; the
// signed conversion keeps it to single instructions). With it a lazy Shoup
// product of y < 2^46 lands in [0, 3q).
func approxShoup(w uint64, c float64) uint64 {
	return uint64(int64(float64(int64(w))*c))<<1 - 1<<15
}

func (f *FlyNTT) inverseLazy(p []uint64) {
	n, q := f.n, f.mod.Q
	p = p[:n]
	mod := &f.mod
	s := f.logN - 1
	b := q
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		lh := f.logN - 1 - s
		w, step := f.ipow[lh], f.ipow[lh+1]
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				x[j] = u + v
				y[j] = mod.mredLazy(u-v+b, w)
			}
			w = mod.MRed(w, step)
		}
		b *= 2
		s--
	}
	for j := range p {
		p[j] = mod.MRed(mod.Reduce(p[j]), f.nInvM)
	}
}
