package edge

import (
	"runtime"
	"testing"

	"github.com/rosemary-fhe/rosemary/internal/cputime"
)

// cpuLoop runs f b.N times on a locked OS thread and reports the thread CPU
// time per op ("cpu-ns/op") beside the wall time: on a shared, loaded
// machine the CPU figure is the stable one.
func cpuLoop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	c0, ok0 := cputime.Thread()
	for i := 0; i < b.N; i++ {
		f()
	}
	c1, ok1 := cputime.Thread()
	if ok0 && ok1 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}
