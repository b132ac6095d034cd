package rns

import (
	"fmt"
	"testing"
)

// The tests here compare the fast paths with the portable Go code directly,
// on shapes and inputs the Lattigo cross-checks do not reach: every size
// from 16 to 2^16, primes at the edges of the IFMA range, inputs up to 4q,
// in-place and out-of-place calls.

// goRef runs f with the fast paths off, then restores the selection in force
// (which a test may have narrowed, see TestAVX512WithoutIFMA).
func goRef(f func()) {
	ifma, avx := useIFMA, useAVX512
	useIFMA, useAVX512 = false, false
	defer func() { useIFMA, useAVX512 = ifma, avx }()
	f()
}

// largestNTTPrime returns the largest prime below 2^bits that is 1 mod 2N.
func largestNTTPrime(t testing.TB, bits, logN int) uint64 {
	t.Helper()
	step := uint64(2) << logN
	for q := (uint64(1)<<bits-1)/step*step + 1; q > step; q -= step {
		if IsPrime(q) {
			return q
		}
	}
	t.Fatalf("no %d-bit NTT prime for logN=%d", bits, logN)
	return 0
}

func TestNTTFastMatchesGo(t *testing.T) {
	for logN := 4; logN <= 17; logN++ {
		N := 1 << logN
		qs := []uint64{largestNTTPrime(t, 50, logN), largestNTTPrime(t, 40, logN), largestNTTPrime(t, 24, logN),
			largestNTTPrime(t, 51, logN), largestNTTPrime(t, 62, logN)}
		if logN == 17 {
			qs = []uint64{qs[0], qs[4]} // keep the test short
		}
		for _, q := range qs {
			t.Run(fmt.Sprintf("logN=%d/q=%d", logN, q), func(t *testing.T) {
				tab, err := NewNTTTable(N, q)
				if err != nil {
					t.Fatal(err)
				}
				if useAVX512 && !tab.accelerated() {
					t.Fatal("no assembly NTT selected")
				}
				inputs := [][]uint64{randLimb(t, N, 4*q), randLimb(t, N, 2*q), randLimb(t, N, q), make([]uint64, N), make([]uint64, N)}
				for i := range inputs[4] {
					inputs[4][i] = 4*q - 1
				}
				for k, in := range inputs {
					keep := append([]uint64(nil), in...)
					wantF, wantB := make([]uint64, N), make([]uint64, N)
					goRef(func() {
						tab.Forward(in, wantF)
						tab.Backward(in, wantB)
					})
					got := make([]uint64, N)
					tab.Forward(in, got)
					assertEqual(t, fmt.Sprintf("Forward input %d", k), got, wantF)
					tab.Backward(in, got)
					assertEqual(t, fmt.Sprintf("Backward input %d", k), got, wantB)
					tab.ForwardLazy(in, got)
					checkLazy(t, fmt.Sprintf("ForwardLazy input %d", k), got, wantF, q)
					tab.BackwardLazy(in, got)
					checkLazy(t, fmt.Sprintf("BackwardLazy input %d", k), got, wantB, q)
					assertEqual(t, "input left unchanged", in, keep)

					// In place, lazy and canonical.
					c := append([]uint64(nil), in...)
					tab.ForwardLazy(c, c)
					checkLazy(t, "ForwardLazy in place", c, wantF, q)
					copy(c, in)
					tab.Forward(c, c)
					assertEqual(t, "Forward in place", c, wantF)
					copy(c, in)
					tab.BackwardLazy(c, c)
					checkLazy(t, "BackwardLazy in place", c, wantB, q)
					copy(c, in)
					tab.Backward(c, c)
					assertEqual(t, "Backward in place", c, wantB)
				}
			})
		}
	}
}

func TestElementwiseFastMatchesGo(t *testing.T) {
	for _, q := range []uint64{largestNTTPrime(t, 50, 4), largestNTTPrime(t, 49, 4), (1 << 20) + 7, 3, largestNTTPrime(t, 60, 4)} {
		m, err := NewModulus(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 1000, 4099} {
			a, b, acc := randLimb(t, n, q), randLimb(t, n, q), randLimb(t, n, q)
			if n > 3 {
				// Extremes.
				a[0], b[0], a[1], b[1], a[2], b[2] = q-1, q-1, 0, q-1, q-1, 0
			}
			type kernel struct {
				name string
				f    func(a, b, out []uint64)
			}
			ks := []kernel{
				{"Add", func(a, b, out []uint64) { Add(a, b, out, q) }},
				{"Sub", func(a, b, out []uint64) { Sub(a, b, out, q) }},
				{"MulMont", func(a, b, out []uint64) { MulMont(a, b, out, &m) }},
				{"MACMont", func(a, b, out []uint64) { copy(out, acc); MACMont(a, b, out, &m) }},
				{"Neg", func(a, _, out []uint64) { Neg(a, out, q) }},
				{"AddScalar", func(a, _, out []uint64) { AddScalar(a, q/3+1, out, q) }},
				{"SubScalar", func(a, _, out []uint64) { SubScalar(a, q-1, out, q) }},
				{"MulBarrett", func(a, b, out []uint64) { MulBarrett(a, b, out, &m) }},
				{"MulScalar", func(a, _, out []uint64) { MulScalar(a, q-2, out, &m) }},
				{"MulScalarMont", func(a, _, out []uint64) { MulScalarMont(a, q/5+3, out, &m) }},
				{"MulScalarMont64", func(a, _, out []uint64) { MulScalarMont(a, ^uint64(0)-7, out, &m) }},
				{"Reduce", func(a, _, out []uint64) { Reduce(a, out, &m) }},
			}
			for _, k := range ks {
				want := make([]uint64, n)
				goRef(func() { k.f(a, b, want) })
				got := make([]uint64, n)
				k.f(a, b, got)
				assertEqual(t, fmt.Sprintf("%s q=%d n=%d", k.name, q, n), got, want)
				// Output aliasing an input.
				if k.name != "MACMont" {
					c := append([]uint64(nil), a...)
					k.f(c, b, c)
					assertEqual(t, fmt.Sprintf("%s out=a q=%d n=%d", k.name, q, n), c, want)
					c = append([]uint64(nil), b...)
					k.f(a, c, c)
					assertEqual(t, fmt.Sprintf("%s out=b q=%d n=%d", k.name, q, n), c, want)
				}
			}
			// Add, Sub, Neg, AddScalar, SubScalar and Reduce agree with Go for
			// arbitrary 64-bit words too.
			wa, wb := randLimb(t, n, ^uint64(0)), randLimb(t, n, ^uint64(0))
			if n > 3 {
				wa[0], wa[1], wa[2] = ^uint64(0), 0, q
			}
			for _, k := range []kernel{ks[0], ks[1], ks[4], ks[5], ks[6], ks[len(ks)-1]} {
				want, got := make([]uint64, n), make([]uint64, n)
				goRef(func() { k.f(wa, wb, want) })
				k.f(wa, wb, got)
				assertEqual(t, k.name+" on 64-bit words", got, want)
			}
		}
	}
}

func TestPermuteFastMatchesGo(t *testing.T) {
	for _, n := range []int{1, 8, 13, 64, 1 << 12} {
		in := randLimb(t, n, ^uint64(0))
		idx := make([]uint32, n)
		for i, r := range randLimb(t, n, uint64(n)) {
			idx[i] = uint32(r)
		}
		want := make([]uint64, n)
		goRef(func() { Permute(in, want, idx) })
		got := make([]uint64, n)
		Permute(in, got, idx)
		assertEqual(t, fmt.Sprintf("Permute n=%d", n), got, want)
	}
	// Shorter index (partial permutation) into a longer input.
	in := randLimb(t, 100, 1<<40)
	idx := []uint32{99, 0, 5, 5, 98, 1, 2, 3, 4, 50, 60}
	got := make([]uint64, len(idx))
	Permute(in, got, idx)
	for i, j := range idx {
		if got[i] != in[j] {
			t.Fatalf("partial permute: out[%d] = %d, want in[%d] = %d", i, got[i], j, in[j])
		}
	}
	// An index past the input panics on both paths.
	for _, pure := range []bool{false, true} {
		func() {
			SetPureGo(pure)
			defer SetPureGo(false)
			defer func() {
				if recover() == nil {
					t.Fatalf("pure=%v: out-of-range index accepted", pure)
				}
			}()
			bad := make([]uint32, 16)
			bad[3] = 16
			Permute(make([]uint64, 16), make([]uint64, 16), bad)
		}()
	}
}

func TestAutomorphismPermuteFastMatchesGo(t *testing.T) {
	for logN := 3; logN <= 13; logN++ {
		N := 1 << logN
		in := randLimb(t, N, ^uint64(0))
		for _, gal := range []uint64{1, 3, 5, 7, GaloisElementForRotation(N, 1), GaloisElementForRotation(N, -9), uint64(2*N - 1)} {
			gal %= uint64(2 * N)
			idx, err := AutomorphismNTTIndex(N, gal)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]uint64, N)
			goRef(func() { Permute(in, want, idx) })
			got := make([]uint64, N)
			Permute(in, got, idx)
			assertEqual(t, fmt.Sprintf("automorphism N=%d gal=%d", N, gal), got, want)
		}
	}
	// A table that keeps blocks of 8 together except in one block must still
	// be applied exactly (the block kernel's result is rejected).
	N := 1 << 10
	in := randLimb(t, N, ^uint64(0))
	idx, _ := AutomorphismNTTIndex(N, 5)
	idx[517], idx[700] = idx[700], idx[517]
	want := make([]uint64, N)
	goRef(func() { Permute(in, want, idx) })
	got := make([]uint64, N)
	Permute(in, got, idx)
	assertEqual(t, "non-block table", got, want)
}

// nttPrimes returns count distinct primes ≡ 1 mod 2^(logN+1) just below 2^bits.
func nttPrimes(t testing.TB, bits, logN, count int) []uint64 {
	t.Helper()
	ps, err := NTTPrimesBelow(bits, logN, count)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestBConvFastMatchesGo(t *testing.T) {
	for _, sh := range []struct{ k, m, bitsQ, bitsP, n int }{
		{1, 1, 50, 50, 16}, {2, 3, 50, 49, 1024}, {4, 24, 49, 50, 1000}, {32, 4, 50, 50, 48},
		{5, 7, 30, 50, 37}, {12, 20, 36, 36, 4096 + 9}, {3, 2, 50, 61, 64}, {3, 2, 61, 50, 64}, {7, 3, 20, 21, 15},
		{32, 3, 61, 61, 1000 + 3}, {4, 8, 60, 62, 513},
	} {
		t.Run(fmt.Sprintf("k=%d/m=%d/q%d/p%d/n=%d", sh.k, sh.m, sh.bitsQ, sh.bitsP, sh.n), func(t *testing.T) {
			var Q, P []uint64
			if sh.bitsQ == sh.bitsP {
				all := nttPrimes(t, sh.bitsQ, 4, sh.k+sh.m)
				Q, P = all[:sh.k], all[sh.k:]
			} else {
				Q, P = nttPrimes(t, sh.bitsQ, 4, sh.k), nttPrimes(t, sh.bitsP, 4, sh.m)
			}
			bc := newTestBConv(t, Q, P)
			if useIFMA && sh.bitsQ <= 50 && sh.bitsP <= 50 && !bc.fitsIFMA() {
				t.Fatal("IFMA kernel not selected")
			}
			in := make([][]uint64, sh.k)
			for i := range in {
				in[i] = randLimb(t, sh.n, ^uint64(0))
			}
			// Extremes in the first coefficients: all q_i − 1 (largest v), all 0.
			if sh.n >= 2 {
				for i := range in {
					in[i][0], in[i][1] = Q[i]-1, 0
				}
			}
			newOut := func() [][]uint64 {
				o := make([][]uint64, sh.m)
				for j := range o {
					o[j] = make([]uint64, sh.n)
				}
				return o
			}
			want, got := newOut(), newOut()
			goRef(func() { bc.Convert(in, want, nil) })
			bc.Convert(in, got, make([]uint64, sh.k*sh.n))
			for j := range want {
				assertEqual(t, fmt.Sprintf("target %d", j), got[j], want[j])
			}
			// The AVX-512F kernels serve every basis; run them on this one too.
			if bc.fast.ifma {
				bc.fast.ifma = false
				got = newOut()
				bc.Convert(in, got, nil)
				bc.fast.ifma = true
				for j := range want {
					assertEqual(t, fmt.Sprintf("target %d (64-bit kernels)", j), got[j], want[j])
				}
			}
		})
	}
}
