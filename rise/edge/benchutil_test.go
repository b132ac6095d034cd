package edge

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/internal/timing"
)

// cpuLoop runs f b.N times on a locked OS thread and reports the thread CPU
// time per op ("cpu-ns/op") beside the wall time: on a shared, loaded
// machine the CPU figure is the stable one.
func cpuLoop(b *testing.B, f func()) {
	b.ResetTimer()
	s, _ := timing.Batch(b.N, func() error { f(); return nil })
	if s.CPUOK {
		b.ReportMetric(float64(s.CPU)/float64(b.N), "cpu-ns/op")
	}
}
