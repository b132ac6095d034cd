package bench

import (
	"os"
	"runtime"
	"testing"
)

// The process CPU clock reads this process's CPU time, which a loop only
// adds to; no process (pid 0) has none.
func TestProcCPUNanos(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process CPU clock of another process is read on Linux only")
	}
	a, ok := procCPUNanos(os.Getpid())
	if !ok || a <= 0 {
		t.Fatalf("this process: %d, %v", a, ok)
	}
	x := 0
	for i := range 1 << 24 {
		x += i ^ x>>3
	}
	sink := x
	_ = sink
	b, ok := procCPUNanos(os.Getpid())
	if !ok || b <= a {
		t.Fatalf("after a loop: %d, then %d", a, b)
	}
	if _, ok := procCPUNanos(0); ok {
		t.Fatal("pid 0 has a CPU clock")
	}
}
