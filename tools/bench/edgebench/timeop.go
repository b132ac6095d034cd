package edgebench

import (
	"math"
	"runtime"
	"time"

	"github.com/rosemary-fhe/rosemary/internal/timing"
)

// benchRounds is the number of rounds a timing is split into; the fastest
// round's mean is reported, which filters out the load of other processes
// on a shared machine.
const benchRounds = 5

// TimeOp runs f once to warm up, then benchRounds rounds of
// max(ceil(iters/benchRounds), ~50 ms worth) calls on one locked OS thread, and returns the mean
// wall time and the mean thread CPU time (CLOCK_THREAD_CPUTIME_ID on Linux;
// 0 where unavailable) of the fastest round, in milliseconds. The CPU time is the
// robust figure on a loaded machine (it excludes time the thread waited
// for a core); both are reported.
func TimeOp(iters int, f func() error) (wallMs, cpuMs float64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	warm, err := timing.Batch(1, f)
	if err != nil {
		return 0, 0, err
	}
	// Rounds last at least ~50 ms, so that a descheduling spike is averaged.
	one := max(warm.Wall, time.Microsecond)
	per := max(1, (iters+benchRounds-1)/benchRounds, int(50*time.Millisecond/one))
	wallMs, cpuMs = math.Inf(1), math.Inf(1)
	for r := 0; r < benchRounds; r++ {
		s, err := timing.Batch(per, f)
		if err != nil {
			return 0, 0, err
		}
		wallMs = math.Min(wallMs, float64(s.Wall.Nanoseconds())/1e6/float64(per))
		if s.CPUOK && s.CPU > 0 {
			cpuMs = math.Min(cpuMs, float64(s.CPU)/1e6/float64(per))
		}
	}
	if math.IsInf(cpuMs, 1) {
		cpuMs = 0
	}
	return wallMs, cpuMs, nil
}

func timeIt(iters int, f func() error) (float64, error) {
	w, _, err := TimeOp(iters, f)
	return w, err
}
