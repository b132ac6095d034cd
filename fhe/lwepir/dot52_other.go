//go:build !amd64 || purego

package lwepir

const useDot52 = false

func dot52x4(l, h *uint64, n int, p0, p1, p2, p3, k0, k1, k2, k3 *uint64) {
	panic("lwepir: no IFMA kernel on this platform")
}

func dot52x1(l, h *uint64, n int, p, k *uint64) {
	panic("lwepir: no IFMA kernel on this platform")
}
