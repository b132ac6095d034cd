package matvec

// kernel names an implementation of the product; a Query is laid out for
// one.
type kernel uint8

const (
	kernelGo   kernel = iota // uint32 multiply-add in Go
	kernelAVX2               // 16-bit digit planes, vpmaddwd
	kernelVNNI               // 8-bit digit planes, vpdpbusd
)

func (k kernel) String() string {
	switch k {
	case kernelAVX2:
		return "avx2"
	case kernelVNNI:
		return "avx512-vnni"
	}
	return "purego"
}

// active is the kernel NewQuery prepares for: the fastest this CPU runs
// (detect, at init). Tests set it to force each path.
var active = detect()

// Kernel names the kernel new queries use on this CPU: "avx512-vnni",
// "avx2" or "purego".
func Kernel() string { return active.String() }

// kernels lists every kernel this build runs on this CPU, fastest last.
func kernels() []kernel {
	out := []kernel{kernelGo}
	for _, k := range []kernel{kernelAVX2, kernelVNNI} {
		if supported(k) {
			out = append(out, k)
		}
	}
	return out
}

func detect() kernel {
	ks := kernels()
	return ks[len(ks)-1]
}
