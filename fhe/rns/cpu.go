package rns

// forcePureGo makes every kernel use its portable Go implementation; only
// SetPureGo changes it, so detect sees every change.
var forcePureGo = false

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
	forcePureGo = on
	detect()
}

func init() { detect() }
