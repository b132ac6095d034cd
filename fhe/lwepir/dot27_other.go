//go:build !amd64 || purego

package lwepir

const useDot27 = false

func dot27x3(acc *uint64, n int, p0, p1, p2, k0, k1, k2 *uint64) {
	panic("lwepir: no limb kernel on this platform")
}

func dot27x1(acc *uint64, n int, p, k *uint64) {
	panic("lwepir: no limb kernel on this platform")
}

func dot27q4(acc *uint64, n, terms int, pt *uint64, ks **uint64, qs int) {
	panic("lwepir: no limb kernel on this platform")
}

func dot27load(dst *uint64, rows **uint64, terms, n, stride int) {
	panic("lwepir: no limb kernel on this platform")
}
