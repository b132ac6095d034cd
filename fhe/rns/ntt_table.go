package rns

import (
	"fmt"
	"math/bits"
)

// NTTTable holds the twiddle factors of the negacyclic NTT of one limb,
// laid out as Lattigo lays them out: Roots[k] = ψ^bitrev(k) and
// RootsInv[k] = ψ^{−bitrev(k)} for k < N, with ψ = g^((q−1)/2N) and g the
// primitive root PrimitiveRoot returns.
type NTTTable struct {
	N    int
	LogN int
	Modulus
	Psi      uint64   // the primitive 2N-th root of unity
	Roots    []uint64 // ψ^bitrev(k)
	RootsInv []uint64 // ψ^−bitrev(k)

	// Shoup companions (floor(w·2^64/q)) of the twiddles, for the Go kernels.
	rootsShoup, rootsInvShoup []uint64

	// 52-bit Shoup companions (floor(w·2^52/q)) for the IFMA kernels; nil
	// when q ≥ 2^50.
	roots52, rootsInv52 []uint64
	// 52-bit Shoup companion of NInv, and RootsInv[1]·NInv (the twiddle of
	// the last inverse stage fused with the scaling) with its companion.
	nInv52, invLastW, invLastW52 uint64
	// Lane-permuted copies of the twiddles of the three innermost stages for
	// the merged IFMA passes: {t2, t2 Shoup52, t1, t1 Shoup52}.
	fwdInner52, invInner52 [4][]uint64
	// The same for the AVX-512F kernels (64-bit Shoup companions), built
	// when those kernels can serve the table; invLastWShoup is the 64-bit
	// companion of invLastW.
	fwdInner64, invInner64 [4][]uint64
	invLastWShoup          uint64

	NInv      uint64 // N^{-1} mod q
	nInvShoup uint64

	// lean marks a table from NewNTTTableLean (see there); psiInv is ψ^-1.
	lean   bool
	psiInv uint64

	// Montgomery forms, as Lattigo stores them (for cross-checking).
	RootsMont, RootsInvMont []uint64
	NInvMont                uint64
}

// NewNTTTable builds the tables for ring degree N (a power of two ≥ 16) and
// prime q ≡ 1 mod 2N.
func NewNTTTable(N int, q uint64) (*NTTTable, error) {
	t, err := newTableHeader(N, q)
	if err != nil {
		return nil, err
	}
	m, psiInv := t.Modulus, t.psiInv

	t.Roots = make([]uint64, N)
	t.RootsInv = make([]uint64, N)
	pw, pwInv := uint64(1), uint64(1)
	for j := 0; j < N; j++ {
		r := bitReverse(uint64(j), t.LogN)
		t.Roots[r] = pw
		t.RootsInv[r] = pwInv
		pw = mulMod(pw, t.Psi, q)
		pwInv = mulMod(pwInv, psiInv, q)
	}
	t.rootsShoup = make([]uint64, N)
	t.rootsInvShoup = make([]uint64, N)
	t.RootsMont = make([]uint64, N)
	t.RootsInvMont = make([]uint64, N)
	for k := 0; k < N; k++ {
		t.rootsShoup[k] = m.ShoupConstant(t.Roots[k])
		t.rootsInvShoup[k] = m.ShoupConstant(t.RootsInv[k])
		t.RootsMont[k] = m.MForm(t.Roots[k])
		t.RootsInvMont[k] = m.MForm(t.RootsInv[k])
	}
	t.nInvShoup = m.ShoupConstant(t.NInv)
	t.NInvMont = m.MForm(t.NInv)
	t.invLastW = mulMod(t.RootsInv[1], t.NInv, q)
	if q < 1<<50 {
		t.roots52 = make([]uint64, N)
		t.rootsInv52 = make([]uint64, N)
		for k := 0; k < N; k++ {
			t.roots52[k] = shoup52(t.Roots[k], q)
			t.rootsInv52[k] = shoup52(t.RootsInv[k], q)
		}
		t.fwdInner52 = [4][]uint64{
			innerTwiddles2(t.Roots, N), innerTwiddles2(t.roots52, N),
			innerTwiddles1(t.Roots, N), innerTwiddles1(t.roots52, N),
		}
		t.invInner52 = [4][]uint64{
			innerTwiddles2(t.RootsInv, N), innerTwiddles2(t.rootsInv52, N),
			innerTwiddles1(t.RootsInv, N), innerTwiddles1(t.rootsInv52, N),
		}
		t.nInv52 = shoup52(t.NInv, q)
		t.invLastW52 = shoup52(t.invLastW, q)
	}
	// The AVX-512F kernels serve q ≥ 2^50, and every q on CPUs with AVX-512
	// but no IFMA (decided when the table is built).
	if q >= 1<<50 || (useAVX512 && !useIFMA) {
		t.fwdInner64 = [4][]uint64{
			innerTwiddles2(t.Roots, N), innerTwiddles2(t.rootsShoup, N),
			innerTwiddles1(t.Roots, N), innerTwiddles1(t.rootsShoup, N),
		}
		t.invInner64 = [4][]uint64{
			innerTwiddles2(t.RootsInv, N), innerTwiddles2(t.rootsInvShoup, N),
			innerTwiddles1(t.RootsInv, N), innerTwiddles1(t.rootsInvShoup, N),
		}
		t.invLastWShoup = m.ShoupConstant(t.invLastW)
	}
	return t, nil
}

// innerTwiddles2 returns the twiddles of the stage with butterfly distance 2,
// r[n/4:n/2], in the order the merged passes load them: for each chunk of 16
// coefficients c, the groups A (8c…8c+7) and B (8c+8…) interleave, giving
// [a0 b0 a1 b1] with a_s = r[n/4+4c+s], b_s = r[n/4+4c+2+s].
func innerTwiddles2(r []uint64, n int) []uint64 {
	out := make([]uint64, n/4)
	for c := 0; c < n/16; c++ {
		for s := 0; s < 2; s++ {
			for g := 0; g < 2; g++ {
				out[4*c+2*s+g] = r[n/4+4*c+2*g+s]
			}
		}
	}
	return out
}

// innerTwiddles1 returns the twiddles of the stage with butterfly distance 1,
// r[n/2:n], permuted for the lane layout [P0 P4 P2 P6] (P_k = [A_k, B_k]):
// [a0 b0 a2 b2 a1 b1 a3 b3] with a_s = r[n/2+8c+s], b_s = r[n/2+8c+4+s].
func innerTwiddles1(r []uint64, n int) []uint64 {
	out := make([]uint64, n/2)
	sub := [4]int{0, 2, 1, 3}
	for c := 0; c < n/16; c++ {
		for j := 0; j < 4; j++ {
			for g := 0; g < 2; g++ {
				out[8*c+2*j+g] = r[n/2+8*c+4*g+sub[j]]
			}
		}
	}
	return out
}

// shoup52 returns floor(w·2^52/q).
func shoup52(w, q uint64) uint64 {
	s, _ := bits.Div64(w>>12, w<<52, q)
	return s
}

func bitReverse(x uint64, n int) uint64 {
	return bits.Reverse64(x) >> (64 - n)
}

// NTTDirection selects the transforms a lean table (NewNTTTableLean) serves.
type NTTDirection uint8

// The directions of NewNTTTableLean.
const (
	NTTForward NTTDirection = 1 << iota
	NTTBackward
)

// LeanNTTSupported reports whether a lean table for q runs an assembly
// kernel on this CPU: the IFMA NTT (AVX-512 IFMA, q < 2^50). Elsewhere a lean
// table still computes correct transforms, but with a slow Go fallback.
func LeanNTTSupported(q uint64) bool { return useIFMA && q < 1<<50 }

// NewNTTTableLean builds a table holding only what the IFMA kernels read for
// the directions in dirs: per direction the twiddles ψ^(±bitrev(k)) of the
// stages with butterfly distance ≥ 4 (k < N/4) and the lane-permuted copies
// of the two innermost stages, each with its 52-bit Shoup companion — 2N
// words per direction instead of the full table's 8N to 14N. Roots and
// RootsInv then hold only their first N/4 entries (the rest lives permuted
// in the kernel copies), and the Montgomery and 64-bit Shoup arrays are
// absent. Transforms are bit-identical to NewNTTTable's (canonical outputs).
// q must be below 2^50; dirs = 0 builds a header (modulus, ψ, N^-1) without
// arrays, to be filled by Retarget. Calling a direction the table was not
// built for panics.
func NewNTTTableLean(N int, q uint64, dirs NTTDirection) (*NTTTable, error) {
	if q >= 1<<50 {
		return nil, fmt.Errorf("rns: lean NTT tables need q < 2^50, have %d", q)
	}
	t, err := newTableHeader(N, q)
	if err != nil {
		return nil, err
	}
	t.lean = true
	if dirs&NTTForward != 0 {
		t.Roots, t.roots52 = make([]uint64, N/4), make([]uint64, N/4)
		t.fwdInner52 = [4][]uint64{make([]uint64, N/4), make([]uint64, N/4), make([]uint64, N/2), make([]uint64, N/2)}
	}
	if dirs&NTTBackward != 0 {
		t.RootsInv, t.rootsInv52 = make([]uint64, N/4), make([]uint64, N/4)
		t.invInner52 = [4][]uint64{make([]uint64, N/4), make([]uint64, N/4), make([]uint64, N/2), make([]uint64, N/2)}
	}
	t.fillLean()
	return t, nil
}

// newTableHeader validates (N, q) and computes the scalars of the table.
func newTableHeader(N int, q uint64) (*NTTTable, error) {
	if N < 16 || N&(N-1) != 0 {
		return nil, fmt.Errorf("rns: ring degree %d must be a power of two ≥ 16", N)
	}
	m, err := NewModulus(q)
	if err != nil {
		return nil, err
	}
	if q%uint64(2*N) != 1 {
		return nil, fmt.Errorf("rns: modulus %d is not 1 mod 2N=%d", q, 2*N)
	}
	g, err := PrimitiveRoot(q)
	if err != nil {
		return nil, err
	}
	t := &NTTTable{N: N, LogN: bits.Len(uint(N)) - 1, Modulus: m}
	t.Psi = ModExp(g, (q-1)/uint64(2*N), q)
	t.psiInv = ModExp(t.Psi, q-2, q)
	t.NInv = ModExp(uint64(N), q-2, q)
	return t, nil
}

// Retarget refills the lean table t for the prime of the lean table src
// (same N; typically a header built with dirs = 0), keeping t's arrays and
// directions: one table can serve several primes in turn without
// allocating. It costs about 2N modular products and Shoup quotients per
// direction.
func (t *NTTTable) Retarget(src *NTTTable) error {
	if !t.lean || !src.lean || src.N != t.N {
		return fmt.Errorf("rns: Retarget needs two lean tables of the same degree")
	}
	t.Modulus, t.Psi, t.psiInv, t.NInv = src.Modulus, src.Psi, src.psiInv, src.NInv
	t.fillLean()
	return nil
}

// TableBytes is the memory held by the table's twiddle arrays.
func (t *NTTTable) TableBytes() int {
	n := len(t.Roots) + len(t.RootsInv) + len(t.rootsShoup) + len(t.rootsInvShoup) +
		len(t.roots52) + len(t.rootsInv52) + len(t.RootsMont) + len(t.RootsInvMont)
	for i := range 4 {
		n += len(t.fwdInner52[i]) + len(t.invInner52[i]) + len(t.fwdInner64[i]) + len(t.invInner64[i])
	}
	return 8 * n
}

// fillLean computes the lean arrays present in t from its modulus and ψ.
func (t *NTTTable) fillLean() {
	q := t.Q
	if t.Roots != nil {
		fillLeanDir(t.Roots, t.roots52, &t.fwdInner52, t.Psi, q, t.LogN)
	}
	if t.RootsInv != nil {
		fillLeanDir(t.RootsInv, t.rootsInv52, &t.invInner52, t.psiInv, q, t.LogN)
	}
	t.nInv52 = shoup52(t.NInv, q)
	t.invLastW = mulMod(ModExp(t.psiInv, uint64(t.N/2), q), t.NInv, q) // RootsInv[1] = ψ^-bitrev(1) = ψ^-(N/2)
	t.invLastW52 = shoup52(t.invLastW, q)
}

// fillLeanDir fills one direction's lean arrays with ψ^bitrev(k) (ψ^-1
// for the inverse) and their 52-bit companions, in destination order: with
// R[k] the full table, R[2^s+i] = ψ^(N/2^(s+1))·R[i] for i < 2^s, so each
// entry is one Shoup product of an earlier one (no dependency chain, no
// scatter).
func fillLeanDir(r, r52 []uint64, inner *[4][]uint64, psi, q uint64, logN int) {
	n := 1 << logN
	sh := newShoup52Barrett(q)
	// c[s] = ψ^(N/2^(s+1)) = ψ^(2^(logN-1-s)), the factor of block s.
	var c [64]uint64
	c[logN-1] = psi
	for s := logN - 2; s >= 0; s-- {
		c[s] = mulMod(c[s+1], c[s+1], q)
	}
	r[0], r52[0] = 1, sh.of(1)
	for s := 0; 1<<s < n/4; s++ {
		w, ws := c[s], shoupConstant64(c[s], q)
		lo := 1 << s
		src, dst := r[:lo], r[lo:2*lo]
		for i, x := range src {
			dst[i] = mulShoup(x, w, ws, q)
		}
		for i, x := range dst {
			r52[lo+i] = sh.of(x)
		}
	}
	// R[N/4+x] = ψ^2·R[x] for x < N/4, into the innerTwiddles2 layout.
	w2, w2s := c[logN-2], shoupConstant64(c[logN-2], q)
	in2, in2s := inner[0][:n/4], inner[1][:n/4]
	for x := 0; x < n/4; x++ {
		o := x&^3 + 2*(x&1) + (x>>1)&1
		v := mulShoup(r[x], w2, w2s, q)
		in2[o], in2s[o] = v, sh.of(v)
	}
	// R[N/2+x] = ψ·R[x] for x < N/2 (R[x] from r or the inner2 copy), into
	// the innerTwiddles1 layout.
	w1, w1s := c[logN-1], shoupConstant64(c[logN-1], q)
	in1, in1s := inner[2][:n/2], inner[3][:n/2]
	sub := [4]int{0, 2, 1, 3}
	for x := 0; x < n/2; x++ {
		var src uint64
		if x < n/4 {
			src = r[x]
		} else {
			y := x - n/4
			src = in2[y&^3+2*(y&1)+(y>>1)&1]
		}
		o := x&^7 + 2*sub[x&3] + (x>>2)&1
		v := mulShoup(src, w1, w1s, q)
		in1[o], in1s[o] = v, sh.of(v)
	}
}

// mulShoup returns x·w mod q in [0, q) given ws = floor(w·2^64/q).
func mulShoup(x, w, ws, q uint64) uint64 {
	r := MulShoupLazy(x, w, ws, q)
	return r - q&-(((r-q)>>63)^1)
}

// shoupConstant64 returns floor(w·2^64/q) for w < q.
func shoupConstant64(w, q uint64) uint64 {
	s, _ := bits.Div64(w, 0, q)
	return s
}

// shoup52Barrett computes floor(v·2^52/q) for v < q < 2^50 without a
// division: with k = bitlen(q)+10 and M = floor(2^(52+k)/q) < 2^63, the
// estimate floor(v·M/2^k) is the quotient or one less (its error is below
// v/2^k < 2^-10), fixed by one check of the remainder.
type shoup52Barrett struct {
	m, q uint64
	k    uint
}

func newShoup52Barrett(q uint64) shoup52Barrett {
	k := uint(bits.Len64(q)) + 10
	m, _ := bits.Div64(uint64(1)<<(52+k-64), 0, q)
	return shoup52Barrett{m: m, q: q, k: k}
}

func (c shoup52Barrett) of(v uint64) uint64 {
	hi, lo := bits.Mul64(v, c.m)
	s := hi<<(64-c.k) | lo>>c.k
	if v<<52-s*c.q >= c.q { // the remainder, exact modulo 2^64
		s++
	}
	return s
}

// leanRoot returns the k-th entry of the full Roots (inv = false) or
// RootsInv table from a lean table's arrays.
func (t *NTTTable) leanRoot(k int, inv bool) uint64 {
	n := t.N
	r, in := t.Roots, &t.fwdInner52
	if inv {
		r, in = t.RootsInv, &t.invInner52
	}
	switch {
	case k < n/4:
		return r[k]
	case k < n/2:
		x := k - n/4
		return in[0][x&^3+2*(x&1)+(x>>1)&1]
	default:
		x := k - n/2
		sub := [4]int{0, 2, 1, 3}
		return in[2][x&^7+2*sub[x&3]+(x>>2)&1]
	}
}
