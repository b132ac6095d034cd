package rns

// KernelPath names the implementation Rosemary's kernel takes for a prime of
// the given size on this CPU (see the dispatch in vec.go, ntt.go, bconv.go).
func KernelPath(kernel string, bits int) string {
	ifma := useIFMA && bits < 50
	switch kernel {
	case "add", "automorphism":
		if useAVX512 {
			return "avx512"
		}
	case "mulmod", "mac":
		if ifma {
			return "avx512-ifma"
		}
		if useAVX512 {
			return "avx512"
		}
	case "ntt", "intt":
		if ifma {
			return "avx512-ifma"
		}
		if useAVX512 && bits >= 50 {
			return "avx512"
		}
	case "bconv":
		if ifma {
			return "avx512-ifma"
		}
		if useAVX512 {
			return "avx512"
		}
	}
	return "purego"
}
