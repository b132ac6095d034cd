//go:build !linux

package edge

// threadCPU is unavailable off Linux; TimeOp then reports wall time only.
func threadCPU() (int64, bool) { return 0, false }
