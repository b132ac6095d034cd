package system

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/rns"
)

// BenchmarkCalibrateCPU measures the rns kernels the CPU baseline is
// calibrated from (cpu.go): one limb of 2^13 coefficients, single locked
// OS thread, median of 200 calls, for 49-bit and 60-bit primes. Run it with
//
//	go test ./sim/system -run XXX -bench CalibrateCPU -benchtime 1x -v
//
// and copy the logged ours_ns figures into cpu.go.
func BenchmarkCalibrateCPU(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res, err := rns.BenchKernels(13, 200)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			for _, r := range res {
				b.Logf("logN=%d q=%d-bit %-12s path=%-11s ours_ns=%.0f", r.LogN, r.QBits, r.Kernel, r.Path, r.OursNs)
			}
		}
	}
}
