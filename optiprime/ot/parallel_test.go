package ot

import (
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// TestSilentSplitWidths runs a Ferret iteration and the derived OTs over
// the silent pools with every parallel loop cut into 1, 2, 3, 5 and 8
// ranges whatever its size (parallelMin 1) — the request's packed bits in
// whole-byte ranges — on batch sizes odd, smaller than the width and
// across byte boundaries, and checks every output.
func TestSilentSplitWidths(t *testing.T) {
	oldW, oldMin := parallelWidth, parallelMin
	defer func() { parallelWidth, parallelMin = oldW, oldMin }()
	parallelMin = 1
	snd, rcv := silentPair(t, FerretSmall)
	g := testPRG(t)
	r, _ := share.NewRing(37)
	for _, w := range []int{1, 2, 3, 5, 8} {
		parallelWidth = w
		// An iteration with its trees and LPN rows split w ways.
		reserve(t, snd, rcv, len(snd.pool.avail)+1)
		checkPools(t, snd, rcv)
		for _, n := range []int{1, 3, 7, 9, 17, 1001} {
			name := fmt.Sprintf("width %d, %d OTs", w, n)
			m0, m1 := g.Uniform(r, n), g.Uniform(r, n)
			choices := g.Bits(n)
			reserve(t, snd, rcv, 3*n)
			wait := run(func() error { return snd.SendChosen(m0, m1, 37) })
			got, err := rcv.ReceiveChosen(choices, 37)
			if err != nil || wait() != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for j := range got {
				if want := [2]uint64{m0[j], m1[j]}[choices[j]]; got[j] != want {
					t.Fatalf("%s: chosen OT %d wrong", name, j)
				}
			}
			var x []uint64
			wait = run(func() (err error) { x, err = snd.SendCorrelated(m0, r); return })
			y, err := rcv.ReceiveCorrelated(choices, r)
			if err != nil || wait() != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for j := range y {
				if want := r.Add(x[j], m0[j]*uint64(choices[j])); y[j] != want {
					t.Fatalf("%s: correlated OT %d wrong", name, j)
				}
			}
			// The millionaires' leaves: 1-out-of-16 of 2-bit messages, packed.
			words, nch := make([]uint64, n), make([]uint16, n)
			for i := range words {
				words[i], nch[i] = g.Uint64(), uint16(g.Uint64()%16)
			}
			reserve(t, snd, rcv, 4*n)
			req, u, err := rcv.RequestN(nch, 4)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := snd.ReplyNPacked(u, words, 4, 2)
			if err != nil {
				t.Fatal(err)
			}
			gotN, err := rcv.FinishN(req, reply, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i := range gotN {
				if want := words[i] >> (2 * nch[i]) & 3; gotN[i] != want {
					t.Fatalf("%s: 1-out-of-16 OT %d: %d, want %d", name, i, gotN[i], want)
				}
			}
		}
	}
}

// TestParallelAligned: inParallelAligned's ranges cover [0, n) without
// overlap, every range but the last a multiple of the alignment.
func TestParallelAligned(t *testing.T) {
	oldW, oldMin := parallelWidth, parallelMin
	defer func() { parallelWidth, parallelMin = oldW, oldMin }()
	parallelMin = 1
	for _, w := range []int{1, 2, 3, 5, 8} {
		parallelWidth = w
		for _, n := range []int{0, 1, 7, 8, 9, 17, 63, 1001} {
			for _, align := range []int{1, 8} {
				seen := make([]int32, n)
				var bad error
				done := make(chan [2]int, 64)
				inParallelAligned(n, align, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						seen[i]++ // disjoint ranges: no two goroutines write one index
					}
					done <- [2]int{lo, hi}
				})
				close(done)
				for rg := range done {
					if rg[0]%align != 0 || (rg[1] != n && rg[1]%align != 0) {
						bad = fmt.Errorf("range %v not aligned to %d", rg, align)
					}
				}
				for i, c := range seen {
					if c != 1 {
						bad = fmt.Errorf("index %d covered %d times", i, c)
					}
				}
				if bad != nil {
					t.Fatalf("width %d, n %d, align %d: %v", w, n, align, bad)
				}
			}
		}
	}
}
