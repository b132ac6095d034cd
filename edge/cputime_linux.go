//go:build linux

package edge

import "syscall"

// threadCPU returns the CPU time consumed by the calling OS thread
// (getrusage RUSAGE_THREAD) in nanoseconds.
func threadCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
