package rns

import (
	"fmt"
	"testing"
)

// The tests here compare the fast paths with the portable Go code directly,
// on shapes and inputs the Lattigo cross-checks do not reach: every size
// from 16 to 2^16, primes at the edges of the IFMA range, inputs up to 4q,
// in-place and out-of-place calls.

// goRef runs f with the fast paths off.
func goRef(f func()) {
	SetPureGo(true)
	defer SetPureGo(false)
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
	for logN := 4; logN <= 16; logN++ {
		N := 1 << logN
		for _, q := range []uint64{largestNTTPrime(t, 50, logN), largestNTTPrime(t, 40, logN), largestNTTPrime(t, 24, logN)} {
			t.Run(fmt.Sprintf("logN=%d/q=%d", logN, q), func(t *testing.T) {
				tab, err := NewNTTTable(N, q)
				if err != nil {
					t.Fatal(err)
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
