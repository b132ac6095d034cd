package edge

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// NTT is an in-place negacyclic number-theoretic transform over Z_q[X]/(X^N+1).
// Forward takes coefficients in [0, q) and returns evaluations at
// ψ^(2·brev(j)+1) in slot j (bit-reversed order, Lattigo's layout), reduced
// to [0, q); Inverse undoes it.
type NTT interface {
	Forward(p []uint64)
	// Forward3 transforms up to three polynomials (nil ones are skipped).
	Forward3(a, b, c []uint64)
	Inverse(p []uint64)
	N() int
	Modulus() *Modulus
}

// nttRoots holds what both NTT variants share.
type nttRoots struct {
	n, logN int
	mod     Modulus
	psi     uint64 // primitive 2N-th root, Lattigo's choice
	psiInv  uint64
	nInv    uint64
}

func newNTTRoots(n int, q uint64) (nttRoots, error) {
	if n < 2 || n&(n-1) != 0 {
		return nttRoots{}, fmt.Errorf("edge: ring degree %d is not a power of two ≥ 2", n)
	}
	mod, err := NewModulus(q)
	if err != nil {
		return nttRoots{}, err
	}
	if (q-1)%uint64(2*n) != 0 {
		return nttRoots{}, fmt.Errorf("edge: modulus %d is not 1 mod 2N=%d", q, 2*n)
	}
	g, err := rns.PrimitiveRoot(q)
	if err != nil {
		return nttRoots{}, err
	}
	r := nttRoots{n: n, logN: bits.Len(uint(n)) - 1, mod: mod}
	r.psi = rns.ModExp(g, (q-1)/uint64(2*n), q)
	r.psiInv = rns.ModExp(r.psi, q-2, q)
	r.nInv = rns.ModExp(uint64(n), q-2, q)
	return r, nil
}

func (r *nttRoots) N() int            { return r.n }
func (r *nttRoots) q() uint64         { return r.mod.Q }
func (r *nttRoots) Modulus() *Modulus { return &r.mod }

// Psi returns the primitive 2N-th root of unity used.
func (r *nttRoots) Psi() uint64 { return r.psi }

func brev(x uint64, nbits int) uint64 {
	if nbits == 0 {
		return 0
	}
	return bits.Reverse64(x) >> (64 - nbits)
}

// TableNTT precomputes ψ^brev(j) and ψ^-brev(j) with their Shoup quotients:
// 4·N words of tables, the fast software choice.
type TableNTT struct {
	nttRoots
	w, ws   []uint64 // forward twiddles ψ^brev(j), Shoup form
	iw, iws []uint64 // inverse twiddles ψ^-brev(j)
	nInvS   uint64
}

// NewTableNTT builds the table NTT for degree n and prime q.
func NewTableNTT(n int, q uint64) (*TableNTT, error) {
	r, err := newNTTRoots(n, q)
	if err != nil {
		return nil, err
	}
	t := &TableNTT{nttRoots: r,
		w: make([]uint64, n), ws: make([]uint64, n), iw: make([]uint64, n), iws: make([]uint64, n)}
	m := &t.mod
	pw, ipw := uint64(1), uint64(1)
	for j := 0; j < n; j++ {
		k := brev(uint64(j), r.logN)
		t.w[k], t.iw[k] = pw, ipw
		t.ws[k], t.iws[k] = m.ShoupConstant(pw), m.ShoupConstant(ipw)
		pw, ipw = m.BRed(pw, r.psi), m.BRed(ipw, r.psiInv)
	}
	t.nInvS = m.ShoupConstant(r.nInv)
	return t, nil
}

// TableBytes is the memory held by the twiddle tables.
func (t *TableNTT) TableBytes() int {
	return 8 * (len(t.w) + len(t.ws) + len(t.iw) + len(t.iws))
}

// Forward computes the NTT of p (len N, values < q) in place.
func (t *TableNTT) Forward(p []uint64) {
	if t.q() < lazyLimit {
		t.forwardRadix4(p)
		return
	}
	n, q := t.n, t.mod.Q
	p = p[:n]
	q2 := 2 * q
	m, h := 1, n>>1
	for ; h > 1; m, h = m<<1, h>>1 {
		for i := 0; i < m; i++ {
			w, ws := t.w[m+i], t.ws[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				u -= q2 & ctGeq(u, q2)
				v := rns.MulShoupLazy(y[j], w, ws, q)
				x[j] = u + v
				y[j] = u - v + q2
			}
		}
	}
	// Last stage (h = 1) fused with the final reduction to [0, q).
	w, ws := t.w[m:2*m], t.ws[m:2*m]
	ws = ws[:len(w)]
	for i := range w {
		u := p[2*i]
		u -= q2 & ctGeq(u, q2)
		v := rns.MulShoupLazy(p[2*i+1], w[i], ws[i], q)
		p[2*i] = condSub(condSub(u+v, q2), q)
		p[2*i+1] = condSub(condSub(u-v+q2, q2), q)
	}
}

// Inverse computes the inverse NTT of p (len N, values < q) in place.
func (t *TableNTT) Inverse(p []uint64) {
	if t.q() < lazyLimit {
		t.inverseLazy(p)
		return
	}
	n, q := t.n, t.mod.Q
	p = p[:n]
	q2 := 2 * q
	for m, h := n>>1, 1; m >= 1; m, h = m>>1, h<<1 {
		for i := 0; i < m; i++ {
			w, ws := t.iw[m+i], t.iws[m+i]
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				s := u + v
				x[j] = s - q2&ctGeq(s, q2)
				y[j] = rns.MulShoupLazy(u-v+q2, w, ws, q)
			}
		}
	}
	for j := range p {
		p[j] = condSub(rns.MulShoupLazy(p[j], t.nInv, t.nInvS, q), q)
	}
}

// FlyNTT computes its twiddles on the fly, as RISE's twiddle unit does: it
// keeps only the log N+1 root registers ψ^(2^s) and ψ^-(2^s) in Montgomery
// form and walks the blocks of each stage in bit-reversed order, so that the
// twiddles of a stage form a geometric sequence (one Montgomery product per
// block). No table: memory is O(log N) words.
type FlyNTT struct {
	nttRoots
	pow, ipow [64]uint64 // ψ^(2^s), ψ^-(2^s), Montgomery form
	nInvM     uint64
	oneM      uint64
	// standard-form registers ψ^(2^s) with Shoup quotients, and 2^63/q,
	// for the lazy forward transform (q < 2^40)
	spow, spowS [64]uint64
	invQ        float64
}

// NewFlyNTT builds the on-the-fly NTT for degree n and prime q.
func NewFlyNTT(n int, q uint64) (*FlyNTT, error) {
	r, err := newNTTRoots(n, q)
	if err != nil {
		return nil, err
	}
	f := &FlyNTT{nttRoots: r}
	m := &f.mod
	a, b := r.psi, r.psiInv
	for s := 0; s <= r.logN; s++ {
		f.pow[s], f.ipow[s] = m.MForm(a), m.MForm(b)
		a, b = m.BRed(a, a), m.BRed(b, b)
	}
	f.nInvM = m.MForm(r.nInv)
	f.oneM = m.MForm(1)
	a = r.psi
	for s := 0; s <= r.logN; s++ {
		f.spow[s], f.spowS[s] = a, m.ShoupConstant(a)
		a = m.BRed(a, a)
	}
	f.invQ = 0x1p63 / float64(q)
	return f, nil
}

// Forward computes the NTT of p in place. Stage m (m blocks of 2h) uses,
// for block i = brev_s(k), the twiddle ψ^(h·(2k+1)) = ψ^h · (ψ^(2h))^k.
func (f *FlyNTT) Forward(p []uint64) {
	if f.q() < lazyLimit {
		f.forwardRadix4(p, nil, nil)
		return
	}
	n, q := f.n, f.mod.Q
	p = p[:n]
	q2 := 2 * q
	mod := &f.mod
	for s, m, h := 0, 1, n>>1; m < n; s, m, h = s+1, m<<1, h>>1 {
		lh := f.logN - 1 - s // h = 2^lh
		w, step := f.pow[lh], f.pow[lh+1]
		for k := 0; k < m; k++ {
			i := int(brev(uint64(k), s))
			x := p[2*i*h : 2*i*h+h]
			y := p[2*i*h+h : 2*i*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u := x[j]
				u -= q2 & ctGeq(u, q2)
				v := mod.mredLazy(y[j], w)
				x[j] = u + v
				y[j] = u - v + q2
			}
			w = mod.MRed(w, step)
		}
	}
	for j := range p {
		p[j] = condSub(condSub(p[j], q2), q)
	}
}

// Inverse computes the inverse NTT of p in place.
func (f *FlyNTT) Inverse(p []uint64) {
	if f.q() < lazyLimit {
		f.inverseLazy(p)
		return
	}
	n, q := f.n, f.mod.Q
	p = p[:n]
	q2 := 2 * q
	mod := &f.mod
	s := f.logN - 1
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
				t := u + v
				x[j] = t - q2&ctGeq(t, q2)
				y[j] = mod.mredLazy(u-v+q2, w)
			}
			w = mod.MRed(w, step)
		}
		s--
	}
	for j := range p {
		p[j] = mod.MRed(p[j], f.nInvM)
	}
}

// Twiddle returns ψ^brev(j), the forward twiddle of index j (Lattigo's
// root table layout): stage m, block i uses index m+i.
func (t *TableNTT) Twiddle(j int) uint64 { return t.w[j] }
