package ot

import (
	"runtime"
	"sync"
)

// parallelMin is the batch size below which splitting over CPUs does not
// pay for the goroutines.
const parallelMin = 1024

// inParallel calls fn on contiguous, disjoint ranges covering [0, n), one
// per CPU (GOMAXPROCS), and waits for them.
func inParallel(n int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers <= 1 || n < parallelMin {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}
