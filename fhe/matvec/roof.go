package matvec

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Roof measures the compute ceiling of a scan on this machine: how many
// query-bytes (one matrix byte times one query) a second the active
// kernel's multiply-add instruction retires on cores goroutines at once
// (≤ 0: GOMAXPROCS), every operand in a register. Memory costs nothing
// there, so B queries over D bytes take at least B·D/Roof seconds whatever
// the memory and the batch: the bound a batched scan's throughput is set
// beside, as the STREAM triad is beside a single scan.
//
// The count per instruction is the kernel's own: vpdpbusd takes 64 bytes
// of one of a query's four 8-bit digit planes (16 query-bytes),
// vpmaddwd with its add 16 bytes of one of two 16-bit planes (8). It is the
// best of five timed rounds of about d/5 each. It returns 0 where the
// active kernel is the Go one (no instruction to time).
func Roof(ctx context.Context, cores int, d time.Duration) (float64, error) {
	loop, perIter := roofLoop(active)
	if loop == nil {
		return 0, nil
	}
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	if d <= 0 || d > time.Minute {
		return 0, fmt.Errorf("matvec: roof over %v (0, 1 min]", d)
	}
	// Calibrate one core's call to about a fifth of d.
	const probe = 1 << 16
	start := time.Now()
	loop(probe)
	n := int(float64(probe) * float64(d/5) / float64(max(time.Since(start), time.Microsecond)))
	n = max(n, probe)
	best := time.Duration(1<<63 - 1)
	for range 5 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var wg sync.WaitGroup
		ready := make(chan struct{})
		for range cores {
			wg.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				<-ready
				loop(n)
			})
		}
		start := time.Now()
		close(ready)
		wg.Wait()
		best = min(best, time.Since(start))
	}
	return float64(cores) * float64(n) * perIter / best.Seconds(), nil
}
