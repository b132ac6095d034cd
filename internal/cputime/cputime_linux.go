//go:build linux

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread returns the CPU time consumed by the calling OS thread
// (clock_gettime CLOCK_THREAD_CPUTIME_ID: scheduler-accounted to the
// nanosecond, unlike getrusage's tick-scaled figures, whose deltas over
// short intervals can even be zero), and true.
func Thread() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
