package cputime

import (
	"runtime"
	"testing"
	"time"
)

// On Linux the thread clock advances by about the CPU work done; elsewhere
// it reports unavailable.
func TestThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := Thread()
	if runtime.GOOS != "linux" {
		if ok {
			t.Fatal("thread CPU time reported off Linux")
		}
		return
	}
	if !ok {
		t.Fatal("no thread CPU clock on Linux")
	}
	start := time.Now()
	x := 1
	for time.Since(start) < 20*time.Millisecond {
		x = x*31 + 7
	}
	c1, _ := Thread()
	if d := c1 - c0; d <= 0 || d > time.Since(start)+time.Millisecond {
		t.Fatalf("thread CPU %v over %v of busy wall time (x=%d)", d, time.Since(start), x)
	}
}
