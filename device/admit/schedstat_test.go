package admit

import (
	"os"
	"testing"
)

// On Linux, the process's threads have run (this test is running) and
// the sum only grows; elsewhere threadCPU says it cannot tell.
func TestThreadCPUReadsThisProcess(t *testing.T) {
	a, ok := threadCPU()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		if ok {
			t.Fatalf("no /proc, yet a reading %+v", a)
		}
		t.Skip("no /proc/self/task here")
	}
	if !ok || a.run <= 0 {
		t.Fatalf("reading %+v, ok %v: want the time this process has run", a, ok)
	}
	x := 0
	for i := 0; i < 1e7; i++ {
		x += i * i
	}
	b, ok := threadCPU()
	if !ok || b.run < a.run {
		t.Fatalf("after %d: %+v, before %+v (ok %v)", x, b, a, ok)
	}
}

func BenchmarkThreadCPU(b *testing.B) {
	for b.Loop() {
		if _, ok := threadCPU(); !ok {
			b.Skip("no schedstat here")
		}
	}
}
