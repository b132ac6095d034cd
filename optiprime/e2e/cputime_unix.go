//go:build unix

package e2e

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) of this process, all
// threads, and true.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
