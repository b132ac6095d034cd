package edge

import "math/bits"

// Fully lazy butterflies for q < 2^40 (covering the 27/30-bit edge primes):
// no reduction inside the transform at all. Forward (Cooley-Tukey) outputs
// grow by 2q per stage, so after log N ≤ 16 stages values stay below 33q;
// inverse (Gentleman-Sande) sums double per stage, staying below 2^17·q.
// Both bounds fit 64-bit words for q < 2^40, and Shoup / Montgomery
// products accept such inputs. One Barrett reduction per coefficient at the
// end brings the result into [0, q).

const lazyLimit = 1 << 40

func (t *TableNTT) forwardLazy(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	q2 := 2 * q
	for m, h := 1, n>>1; m < n; m, h = m<<1, h>>1 {
		if h == 1 {
			w, ws := t.w[m:2*m], t.ws[m:2*m]
			ws = ws[:len(w)]
			for i := range w {
				u := p[2*i]
				v := shoupMulLazy(p[2*i+1], w[i], ws[i], q)
				p[2*i] = t.mod.Reduce(u + v)
				p[2*i+1] = t.mod.Reduce(u - v + q2)
			}
			return
		}
		for i := 0; i < m; i++ {
			w, ws := t.w[m+i], t.ws[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				v := shoupMulLazy(y[j], w, ws, q)
				x[j] = u + v
				y[j] = u - v + q2
			}
		}
	}
}

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
				y[j] = shoupMulLazy(u-v+b, w, ws, q)
			}
		}
		b *= 2
	}
	for j := range p {
		p[j] = condSub(shoupMulLazy(p[j], t.nInv, t.nInvS, q), q)
	}
}

// approxShoup returns a Shoup quotient for w < 2^40 that is at most 2^14
// below floor(w·2^64/q) and never above it: one float multiplication
// instead of a 128-by-64-bit division. With it a lazy Shoup product of
// y < 2^46 lands in [0, 3q).
func approxShoup(w uint64, c float64) uint64 {
	a := float64(w) * c
	if a < 1<<14 {
		return 0
	}
	if a >= 0x1p64 {
		return ^uint64(0) - 1<<14
	}
	return uint64(a) - 1<<14
}

// forwardLazy visits each stage's blocks in natural order. Block i of
// stage m = 2^s needs ψ^(h + Σ_{bits b of i} 2^(logN-1-b)): a product of the
// root registers selected by the bits of i. Keeping the partial products of
// a binary counter (q[b] = product over the bits ≥ b of i), incrementing i
// costs one exact Shoup product, so the twiddles cost one multiplication per
// block in sequential memory order. The Shoup quotient of each new twiddle
// is approximated in floating point (approxShoup), so products land in
// [0, 3q) and outputs grow by at most 3q per stage (< 49q after 16 stages).
func (f *FlyNTT) forwardLazy(p []uint64) {
	n, q := f.n, f.mod.Q
	p = p[:n]
	q3 := 3 * q
	c := f.invQ
	top := f.logN - 1
	var part [64]uint64
	for s, m, h := 0, 1, n>>1; m < n; s, m, h = s+1, m<<1, h>>1 {
		lh := f.logN - 1 - s
		for b := 0; b <= s; b++ {
			part[b] = f.spow[lh]
		}
		w := part[0]
		ws := approxShoup(w, c)
		for i := 0; i < m; i++ {
			if i > 0 {
				t := bits.TrailingZeros(uint(i))
				w = condSub(shoupMulLazy(part[t+1], f.spow[top-t], f.spowS[top-t], q), q)
				for b := 0; b <= t; b++ {
					part[b] = w
				}
				ws = approxShoup(w, c)
			}
			switch h {
			case 1:
				u := p[2*i]
				v := shoupMulLazy(p[2*i+1], w, ws, q)
				p[2*i] = f.mod.Reduce(u + v)
				p[2*i+1] = f.mod.Reduce(u - v + q3)
			case 2:
				x := p[4*i : 4*i+4 : 4*i+4]
				u0, u1 := x[0], x[1]
				v0 := shoupMulLazy(x[2], w, ws, q)
				v1 := shoupMulLazy(x[3], w, ws, q)
				x[0], x[2] = u0+v0, u0-v0+q3
				x[1], x[3] = u1+v1, u1-v1+q3
			default:
				x := p[2*i*h : 2*i*h+h]
				y := p[2*i*h+h : 2*i*h+2*h]
				y = y[:len(x)]
				for j := range x {
					u := x[j]
					v := shoupMulLazy(y[j], w, ws, q)
					x[j] = u + v
					y[j] = u - v + q3
				}
			}
		}
	}
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
