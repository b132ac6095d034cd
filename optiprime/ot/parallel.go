package ot

import (
	"runtime"
	"sync"
)

// parallelMin is the batch size below which splitting over CPUs does not
// pay for the goroutines (a variable for tests, which split tiny batches).
var parallelMin = 1024

// parallelWidth is the ranges a batch is split into; 0: GOMAXPROCS (a
// variable for tests, which split at several widths).
var parallelWidth = 0

// inParallel calls fn on contiguous, disjoint ranges covering [0, n), one
// per CPU (GOMAXPROCS), and waits for them.
func inParallel(n int, fn func(lo, hi int)) { inParallelAligned(n, 1, fn) }

// inParallelAligned is inParallel with every range but the last a multiple
// of align long, for loops that write packed bits (align 8: no two ranges
// share a byte).
func inParallelAligned(n, align int, fn func(lo, hi int)) {
	workers := parallelWidth
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers <= 1 || n < parallelMin || n <= align {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	step = (step + align - 1) / align * align
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}

// parallelCopy is copy(dst, src) in parallel ranges (a refill moves the
// pool's unused OTs, up to 2^24 blocks, behind the new ones).
func parallelCopy[T any](dst, src []T) {
	n := min(len(dst), len(src))
	inParallel(n, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}
