//go:build linux

package edge

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time consumed by the calling OS thread in
// nanoseconds (clock_gettime CLOCK_THREAD_CPUTIME_ID: scheduler-accounted to
// the nanosecond, unlike getrusage's tick-scaled figures, whose deltas over
// short intervals can even be zero).
func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
