package edge

import (
	"math/bits"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Radix-4 passes: two Cooley-Tukey stages per sweep over memory. For a
// block of stage s with twiddle W (half-size H) and its two children of
// stage s+1 with twiddles Wlo and Whi, four elements x0..x3 at offsets
// 0, H/2, H, 3H/2 go through
//
//	(x0, x2) ← (x0 + W·x2, x0 − W·x2),  (x1, x3) ← (x1 + W·x3, x1 − W·x3)
//	(x0, x1) ← (x0 + Wlo·x1, x0 − Wlo·x1), (x2, x3) ← (x2 + Whi·x3, x2 − Whi·x3)
//
// with four loads and four stores instead of eight of each. Values are
// lazy (no reduction) as in ntt_lazy.go: each stage adds at most 3q.

// r4 applies one radix-4 pass to the block at base (size 2H) of p.
func r4(p []uint64, base, H int, w, ws, wl, wls, wh, whs, q uint64) {
	q3 := 3 * q
	k := H / 2
	a := p[base : base+k]
	b := p[base+k : base+2*k]
	c := p[base+2*k : base+3*k]
	d := p[base+3*k : base+4*k]
	b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
	for j := range a {
		x0, x1 := a[j], b[j]
		t2 := rns.MulShoupLazy(c[j], w, ws, q)
		t3 := rns.MulShoupLazy(d[j], w, ws, q)
		y0, y2 := x0+t2, x0-t2+q3
		y1, y3 := x1+t3, x1-t3+q3
		u1 := rns.MulShoupLazy(y1, wl, wls, q)
		u3 := rns.MulShoupLazy(y3, wh, whs, q)
		a[j], b[j] = y0+u1, y0-u1+q3
		c[j], d[j] = y2+u3, y2-u3+q3
	}
}

// r4last is r4 for H = 2 (the last two stages) with the final reduction.
func r4last(p []uint64, base int, w, ws, wl, wls, wh, whs uint64, m *Modulus) {
	q := m.Q
	q3 := 3 * q
	x := p[base : base+4 : base+4]
	t2 := rns.MulShoupLazy(x[2], w, ws, q)
	t3 := rns.MulShoupLazy(x[3], w, ws, q)
	y0, y2 := x[0]+t2, x[0]-t2+q3
	y1, y3 := x[1]+t3, x[1]-t3+q3
	u1 := rns.MulShoupLazy(y1, wl, wls, q)
	u3 := rns.MulShoupLazy(y3, wh, whs, q)
	x[0], x[1] = m.Reduce(y0+u1), m.Reduce(y0-u1+q3)
	x[2], x[3] = m.Reduce(y2+u3), m.Reduce(y2-u3+q3)
}

// radix2First runs stage 0 alone (used when log N is odd).
func radix2First(p []uint64, w, ws, q uint64) {
	h := len(p) / 2
	x, y := p[:h], p[h:]
	y = y[:len(x)]
	q3 := 3 * q
	for j := range x {
		u := x[j]
		v := rns.MulShoupLazy(y[j], w, ws, q)
		x[j], y[j] = u+v, u-v+q3
	}
}

func (t *TableNTT) forwardRadix4(p []uint64) {
	n, q := t.n, t.mod.Q
	p = p[:n]
	m := 1
	if t.logN&1 == 1 {
		radix2First(p, t.w[1], t.ws[1], q)
		m = 2
	}
	for ; m < n; m <<= 2 {
		H := n / (2 * m)
		for i := 0; i < m; i++ {
			lo, hi := 2*(m+i), 2*(m+i)+1
			if H == 2 {
				r4last(p, 2*i*H, t.w[m+i], t.ws[m+i], t.w[lo], t.ws[lo], t.w[hi], t.ws[hi], &t.mod)
			} else {
				r4(p, 2*i*H, H, t.w[m+i], t.ws[m+i], t.w[lo], t.ws[lo], t.w[hi], t.ws[hi], q)
			}
		}
	}
	if n <= 2 {
		for j := range p {
			p[j] = t.mod.Reduce(p[j])
		}
	}
}

// Forward3 transforms up to three polynomials (nil ones are skipped) with
// one pass of twiddle generation: the on-the-fly twiddles of a limb are
// computed once and applied to all of them, as RISE's parallel BFUs share
// one twiddle unit. The encryptor transforms u, Δm+e0 and e1 of a limb this
// way.
func (f *FlyNTT) Forward3(a, b, c []uint64) {
	if f.q() >= lazyLimit {
		for _, p := range [3][]uint64{a, b, c} {
			if p != nil {
				f.Forward(p)
			}
		}
		return
	}
	f.forwardRadix4(a, b, c)
}

// Forward3 of the table NTT transforms each non-nil polynomial in turn.
func (t *TableNTT) Forward3(a, b, c []uint64) {
	for _, p := range [3][]uint64{a, b, c} {
		if p != nil {
			t.Forward(p)
		}
	}
}

// forwardRadix4 of the on-the-fly NTT: for the pair of stages (s, s+1) a
// binary counter over the block index i yields Wlo = tw(s+1, 2i) (one exact
// product per step); then W = Wlo² and Whi = Wlo·ψ^(N/2) (ψ^(N/2) is the
// fourth root of unity), three products per block. Twiddles are computed
// for a chunk of blocks first, then the chunk's butterflies run on each of
// the (up to three) polynomials.
func (f *FlyNTT) forwardRadix4(pa, pb, pc []uint64) {
	n, q := f.n, f.mod.Q
	polys := [3][]uint64{pa, pb, pc}
	np := 0
	for _, p := range polys {
		if p != nil {
			polys[np] = p[:n]
			np++
		}
	}
	c := f.invQ
	top := f.logN - 1
	rootI, rootIS := f.spow[top], f.spowS[top]
	var part [64]uint64
	s, m := 0, 1
	if f.logN&1 == 1 {
		for _, p := range polys[:np] {
			radix2First(p, f.spow[top], f.spowS[top], q)
		}
		s, m = 1, 2
	}
	const chunk = 32
	var tw [6][chunk]uint64
	for ; m < n; s, m = s+2, m<<2 {
		H := n / (2 * m)
		// Wlo exponent for block i: H/2 + Σ_{bits b of i} 2^(top-b-1).
		lh := bits.Len(uint(H/2)) - 1
		for b := 0; b <= s; b++ {
			part[b] = f.spow[lh]
		}
		wl := part[0]
		for i0 := 0; i0 < m; i0 += chunk {
			cn := min(chunk, m-i0)
			for k := 0; k < cn; k++ {
				if i := i0 + k; i > 0 {
					t := bits.TrailingZeros(uint(i))
					wl = condSub(rns.MulShoupLazy(part[t+1], f.spow[top-t-1], f.spowS[top-t-1], q), q)
					for b := 0; b <= t; b++ {
						part[b] = wl
					}
				}
				wls := approxShoup(wl, c)
				w := condSub(condSub(rns.MulShoupLazy(wl, wl, wls, q), q), q)
				wh := condSub(rns.MulShoupLazy(wl, rootI, rootIS, q), q)
				tw[0][k], tw[1][k] = w, approxShoup(w, c)
				tw[2][k], tw[3][k] = wl, wls
				tw[4][k], tw[5][k] = wh, approxShoup(wh, c)
			}
			for _, p := range polys[:np] {
				if H == 2 {
					r4lastChunk(p[4*i0:4*(i0+cn)], &tw, &f.mod)
					continue
				}
				for k := 0; k < cn; k++ {
					r4(p, 2*(i0+k)*H, H, tw[0][k], tw[1][k], tw[2][k], tw[3][k], tw[4][k], tw[5][k], q)
				}
			}
		}
	}
	if n <= 2 {
		for _, p := range polys[:np] {
			for j := range p {
				p[j] = f.mod.Reduce(p[j])
			}
		}
	}
}

// r4lastChunk runs the last two stages (H = 2) over consecutive blocks of
// four with the twiddles of tw, and reduces the outputs to [0, q).
func r4lastChunk(blk []uint64, tw *[6][32]uint64, mod *Modulus) {
	q := mod.Q
	q3 := 3 * q
	for k := 0; k < len(blk)/4; k++ {
		x := blk[4*k : 4*k+4 : 4*k+4]
		w, ws := tw[0][k], tw[1][k]
		t2 := rns.MulShoupLazy(x[2], w, ws, q)
		t3 := rns.MulShoupLazy(x[3], w, ws, q)
		y0, y2 := x[0]+t2, x[0]-t2+q3
		y1, y3 := x[1]+t3, x[1]-t3+q3
		u1 := rns.MulShoupLazy(y1, tw[2][k], tw[3][k], q)
		u3 := rns.MulShoupLazy(y3, tw[4][k], tw[5][k], q)
		x[0], x[1] = mod.Reduce(y0+u1), mod.Reduce(y0-u1+q3)
		x[2], x[3] = mod.Reduce(y2+u3), mod.Reduce(y2-u3+q3)
	}
}
