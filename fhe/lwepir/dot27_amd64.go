//go:build amd64 && !purego

package lwepir

import "golang.org/x/sys/cpu"

// useDot27 is whether the CPU (and the OS, which must save the wide
// registers; x/sys/cpu checks it) runs the AVX2 limb kernels.
var useDot27 = cpu.X86.HasAVX2

// dot27x3 adds three terms' products, in 27-bit limbs, to the sums at acc
// (dot27.go) for n coefficients, n a multiple of 4.
//
//go:noescape
func dot27x3(acc *uint64, n int, p0, p1, p2, k0, k1, k2 *uint64)

// dot27x1 is dot27x3 for one term.
//
//go:noescape
func dot27x1(acc *uint64, n int, p, k *uint64)
