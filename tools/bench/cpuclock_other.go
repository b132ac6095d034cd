//go:build !linux

package bench

// procCPUNanos is not available here: per-query device CPU is not reported.
func procCPUNanos(int) (int64, bool) { return 0, false }
