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

// approxShoup returns a Shoup quotient for 1 ≤ w < q < 2^40 that is at
// most 2^15 below floor(w·2^64/q) and never above it: one float
// multiplication instead of a 128-by-64-bit division (c = 2^63/q; the
// signed conversion keeps it to single instructions). With it a lazy Shoup
// product of y < 2^46 lands in [0, 3q).
func approxShoup(w uint64, c float64) uint64 {
	return uint64(int64(float64(int64(w))*c))<<1 - 1<<15
}

// forwardLazy computes every twiddle from the log N root registers. Block i
// of stage m = 2^s needs ψ^(h + Σ_{bits b of i} 2^(logN-1-b)), a product of
// registers selected by the bits of i. For s ≥ 2 the blocks are taken four
// at a time, i = i0 + j·m/4 (j < 4): a binary counter over i0 keeps the
// partial products (one exact Shoup product per step), and the four
// twiddles are that base times one of four per-stage constants — four
// independent products, so the serial dependency of the counter is spread
// over four blocks. Shoup quotients of the twiddles are approximated in
// floating point (approxShoup): products land in [0, 3q) and outputs grow
// by at most 3q per stage (< 49q after 16 stages).
func (f *FlyNTT) forwardLazy(p []uint64) {
	n, q := f.n, f.mod.Q
	p = p[:n]
	q3 := 3 * q
	c := f.invQ
	top := f.logN - 1
	var part [64]uint64
	var w, ws [4]uint64
	for s, m, h := 0, 1, n>>1; m < n; s, m, h = s+1, m<<1, h>>1 {
		lh := f.logN - 1 - s
		if s < 2 {
			// one or two blocks: direct
			for i := 0; i < m; i++ {
				t := f.spow[lh]
				if i == 1 {
					t = f.mod.Mul(t, f.spow[top])
				}
				tws := approxShoup(t, c)
				x := p[2*i*h : 2*i*h+h]
				y := p[2*i*h+h : 2*i*h+2*h]
				y = y[:len(x)]
				for j := range x {
					u := x[j]
					v := shoupMulLazy(y[j], t, tws, q)
					x[j] = u + v
					y[j] = u - v + q3
				}
			}
			if h == 1 {
				for j := range p {
					p[j] = f.mod.Reduce(p[j])
				}
			}
			continue
		}
		// per-stage constants for the two top bits of i
		c1, c2 := f.spow[top-(s-2)], f.spow[top-(s-1)]
		c3 := f.mod.Mul(c1, c2)
		cs := [4]uint64{1, c1, c2, c3}
		css := [4]uint64{0, f.spowS[top-(s-2)], f.spowS[top-(s-1)], shoup(c3, q)}
		quarter := m >> 2
		stride := quarter * 2 * h
		for b := 0; b <= s; b++ {
			part[b] = f.spow[lh]
		}
		base := part[0]
		for i0 := 0; i0 < quarter; i0++ {
			if i0 > 0 {
				t := bits.TrailingZeros(uint(i0))
				base = condSub(shoupMulLazy(part[t+1], f.spow[top-t], f.spowS[top-t], q), q)
				for b := 0; b <= t; b++ {
					part[b] = base
				}
			}
			w[0] = base
			w[1] = condSub(shoupMulLazy(base, cs[1], css[1], q), q)
			w[2] = condSub(shoupMulLazy(base, cs[2], css[2], q), q)
			w[3] = condSub(shoupMulLazy(base, cs[3], css[3], q), q)
			for j := range ws {
				ws[j] = approxShoup(w[j], c)
			}
			off := 2 * i0 * h
			switch h {
			case 1:
				for j := 0; j < 4; j++ {
					o := off + j*stride
					u := p[o]
					v := shoupMulLazy(p[o+1], w[j], ws[j], q)
					p[o] = f.mod.Reduce(u + v)
					p[o+1] = f.mod.Reduce(u - v + q3)
				}
			case 2:
				for j := 0; j < 4; j++ {
					x := p[off+j*stride : off+j*stride+4 : off+j*stride+4]
					u0, u1 := x[0], x[1]
					v0 := shoupMulLazy(x[2], w[j], ws[j], q)
					v1 := shoupMulLazy(x[3], w[j], ws[j], q)
					x[0], x[2] = u0+v0, u0-v0+q3
					x[1], x[3] = u1+v1, u1-v1+q3
				}
			default:
				for j := 0; j < 4; j++ {
					x := p[off+j*stride : off+j*stride+h]
					y := p[off+j*stride+h : off+j*stride+2*h]
					y = y[:len(x)]
					wj, wsj := w[j], ws[j]
					for k := range x {
						u := x[k]
						v := shoupMulLazy(y[k], wj, wsj, q)
						x[k] = u + v
						y[k] = u - v + q3
					}
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
