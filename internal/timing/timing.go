// Package timing is the one loop the benchmarks time repeated calls with:
// a batch of calls on a locked OS thread, measured in wall time and in the
// thread's CPU time (package cputime). Callers reduce the samples as their
// figures are defined (median, mean, fastest round); Median and Alternate
// cover the reductions more than one of them uses.
package timing

import (
	"runtime"
	"slices"
	"time"

	"github.com/rosemary-fhe/rosemary/internal/cputime"
)

// Sample is what one batch of calls took.
type Sample struct {
	Wall time.Duration
	// CPU is the calling thread's CPU time; valid only if CPUOK (the OS
	// has a per-thread clock).
	CPU   time.Duration
	CPUOK bool
}

// CPUOrWall is the thread CPU time where the OS reports it, else the wall
// time: the stable figure of a single-threaded computation on a loaded
// machine.
func (s Sample) CPUOrWall() time.Duration {
	if s.CPUOK {
		return s.CPU
	}
	return s.Wall
}

// Batch calls f calls times in a row, stopping at its first error, with
// the goroutine locked to its OS thread (so that the thread CPU clock
// measures f), and returns the time the batch took.
func Batch(calls int, f func() error) (Sample, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return batch(calls, f, true)
}

// batch is Batch's loop; without threadCPU it reads the wall clock only
// and leaves the goroutine free to move between threads. The CPU clock is
// read outside the wall interval, so reading it costs the wall figure
// nothing.
func batch(calls int, f func() error, threadCPU bool) (Sample, error) {
	var c0 time.Duration
	ok0 := false
	if threadCPU {
		c0, ok0 = cputime.Thread()
	}
	t0 := time.Now()
	var err error
	for i := 0; i < calls && err == nil; i++ {
		err = f()
	}
	s := Sample{Wall: time.Since(t0)}
	if ok0 {
		if c1, ok1 := cputime.Thread(); ok1 {
			s.CPU, s.CPUOK = c1-c0, true
		}
	}
	return s, err
}

// Alternate runs rounds rounds of fs, each function once per round in
// order, and returns each function's total wall time. Interleaving the
// calls spreads a change in the machine's load over all of them alike.
// The goroutine is not locked to a thread: the functions may fan out, and
// only wall time is read.
func Alternate(rounds int, fs ...func() error) ([]time.Duration, error) {
	total := make([]time.Duration, len(fs))
	for r := 0; r < rounds; r++ {
		for i, f := range fs {
			s, err := batch(1, f, false)
			if err != nil {
				return nil, err
			}
			total[i] += s.Wall
		}
	}
	return total, nil
}

// Median returns the median of xs (the mean of the middle two for an even
// count; 0 for none). It sorts xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
