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

// dot27q4 sums terms products for four queries at once (dot27.go,
// dotQ4): pt holds the factors transposed by strips of four
// coefficients, ks[t] points at the first query's pre-split key for term
// t and each next query's is qs bytes on; n is a multiple of 4 and terms
// at least 1.
//
//go:noescape
func dot27q4(acc *uint64, n, terms int, pt *uint64, ks **uint64, qs int)

// dot27load copies a block's factor rows into dot27q4's strips
// (dotQ4.load); n is a multiple of 8 and terms at least 1.
//
//go:noescape
func dot27load(dst *uint64, rows **uint64, terms, n, stride int)
