//go:build !amd64 || purego

package matvec

// supported: only the Go kernel is built here.
func supported(k kernel) bool { return k == kernelGo }

func mulAddAsm(k kernel, accs [][]uint32, tile []byte, qs []*Query, off int) {
	panic("matvec: no vector kernels in this build")
}

// roofLoop: the Go kernel has no instruction to time.
func roofLoop(kernel) (func(int) uint32, float64) { return nil, 0 }
