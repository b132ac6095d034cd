//go:build amd64 && !purego

package lwepir

import "golang.org/x/sys/cpu"

// useDot52 is whether the CPU (and the OS, which must save the wide
// registers; x/sys/cpu checks it) runs the AVX-512 IFMA kernels.
var useDot52 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA

// dot52x4 adds four terms' products to the sums l (low 52 bits of each
// product) and h (high 52 bits) for n coefficients, n a multiple of 8.
//
//go:noescape
func dot52x4(l, h *uint64, n int, p0, p1, p2, p3, k0, k1, k2, k3 *uint64)

// dot52x1 is dot52x4 for one term.
//
//go:noescape
func dot52x1(l, h *uint64, n int, p, k *uint64)
