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

	// Montgomery forms, as Lattigo stores them (for cross-checking).
	RootsMont, RootsInvMont []uint64
	NInvMont                uint64
}

// NewNTTTable builds the tables for ring degree N (a power of two ≥ 16) and
// prime q ≡ 1 mod 2N.
func NewNTTTable(N int, q uint64) (*NTTTable, error) {
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
	psiInv := ModExp(t.Psi, q-2, q)

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
	t.NInv = ModExp(uint64(N), q-2, q)
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
