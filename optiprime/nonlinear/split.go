package nonlinear

import (
	"runtime"
	"sync"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// splitWidth is the ranges a batch's local loops are cut into, each run by
// its own goroutine; 0: GOMAXPROCS. A variable for tests, which split at
// several widths.
var splitWidth = 0

// splitMin is the elements below which a loop runs as one range (the
// goroutines would cost more than they save). A variable for tests.
var splitMin = 4096

// splitRanges is the ranges split cuts n elements into: contiguous,
// disjoint, covering [0, n), at most the split width of them.
func splitRanges(n int) [][2]int {
	w := splitWidth
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	if w <= 1 || n < splitMin {
		return [][2]int{{0, n}}
	}
	step := (n + w - 1) / w
	var rs [][2]int
	for lo := 0; lo < n; lo += step {
		rs = append(rs, [2]int{lo, min(lo+step, n)})
	}
	return rs
}

// split calls fn on splitRanges(n), concurrently, and waits for them.
func split(n int, fn func(lo, hi int)) {
	rs := splitRanges(n)
	if len(rs) == 1 {
		fn(rs[0][0], rs[0][1])
		return
	}
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(r[0], r[1])
	}
	wg.Wait()
}

// splitRand is split for loops that draw randomness: each range gets its
// own PRG, seeded from this party's (the seeds drawn before the ranges
// start, so the streams are independent of the scheduling).
func (p *Party) splitRand(n int, fn func(lo, hi int, g *share.PRG)) {
	rs := splitRanges(n)
	if len(rs) == 1 {
		fn(rs[0][0], rs[0][1], p.prg)
		return
	}
	gs := make([]*share.PRG, len(rs))
	for i := range gs {
		var seed [share.SeedSize]byte
		p.prg.Read(seed[:])
		gs[i] = share.NewPRGFromSeed(seed[:], "rosemary/optiprime/nonlinear.split")
	}
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func(lo, hi int, g *share.PRG) {
			defer wg.Done()
			fn(lo, hi, g)
		}(r[0], r[1], gs[i])
	}
	wg.Wait()
}
