package rns

// ForcePureGo, when set before any kernel runs (tests flip it), makes every
// kernel use its portable Go implementation.
var ForcePureGo = false

// Accelerated reports which fast paths are active.
func Accelerated() string {
	switch {
	case useIFMA && useAVX512:
		return "avx512-ifma"
	case useAVX512:
		return "avx512"
	}
	return "purego"
}

// SetPureGo switches the fast paths off (true) or back to what the CPU
// supports (false). It is not safe to call concurrently with kernels.
func SetPureGo(on bool) {
	ForcePureGo = on
	detect()
}

func init() { detect() }
