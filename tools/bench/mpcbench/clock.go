package mpcbench

import (
	"runtime"
	"time"

	"github.com/rosemary-fhe/rosemary/internal/cputime"
)

// stopwatch measures a single-goroutine computation: the thread's CPU time
// where the OS reports it (so other processes on a loaded machine do not
// inflate it), else wall time. The goroutine is locked to its thread while
// it runs.
type stopwatch struct {
	wall0 time.Time
	cpu0  time.Duration
	ok    bool
}

func startWatch() *stopwatch {
	runtime.LockOSThread()
	cpu, ok := cputime.Thread()
	return &stopwatch{wall0: time.Now(), cpu0: cpu, ok: ok}
}

// stop returns the CPU (or wall) time and the wall time, and unlocks.
func (s *stopwatch) stop() (cpu, wall time.Duration) {
	wall = time.Since(s.wall0)
	cpu = wall
	if s.ok {
		if c, ok := cputime.Thread(); ok {
			cpu = c - s.cpu0
		}
	}
	runtime.UnlockOSThread()
	return cpu, wall
}
