package timing

import (
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"
)

// spin busies the thread for about d of wall time.
func spin(d time.Duration) {
	x := 1
	for t0 := time.Now(); time.Since(t0) < d; {
		x = x*31 + 7
	}
	_ = x
}

func TestBatchCountsCallsAndTimes(t *testing.T) {
	n := 0
	s, err := Batch(4, func() error { n++; spin(5 * time.Millisecond); return nil })
	if err != nil || n != 4 {
		t.Fatalf("%d calls, %v; want 4 calls", n, err)
	}
	if s.Wall < 20*time.Millisecond {
		t.Fatalf("wall %v for 4 × 5 ms", s.Wall)
	}
	if runtime.GOOS == "linux" {
		if !s.CPUOK || s.CPU <= 0 || s.CPU > s.Wall+time.Millisecond {
			t.Fatalf("thread CPU %v (ok %v) over wall %v", s.CPU, s.CPUOK, s.Wall)
		}
		if s.CPUOrWall() != s.CPU {
			t.Fatal("CPUOrWall ignores the CPU time")
		}
	}
}

func TestBatchStopsAtError(t *testing.T) {
	n := 0
	stop := errors.New("stop")
	_, err := Batch(10, func() error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("%d calls, error %v; want 3 calls and the error", n, err)
	}
}

func TestCPUOrWallFallsBack(t *testing.T) {
	s := Sample{Wall: 7, CPU: 3}
	if s.CPUOrWall() != 7 {
		t.Fatalf("got %v without a CPU clock, want the wall time", s.CPUOrWall())
	}
}

func TestAlternate(t *testing.T) {
	var order []int
	total, err := Alternate(3,
		func() error { order = append(order, 0); spin(2 * time.Millisecond); return nil },
		func() error { order = append(order, 1); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 0, 1, 0, 1}; !slices.Equal(order, want) {
		t.Fatalf("call order %v, want %v", order, want)
	}
	if len(total) != 2 || total[0] < 6*time.Millisecond || total[1] >= total[0] {
		t.Fatalf("totals %v; want ≥ 6 ms for the spinning function, less for the other", total)
	}
	stop := errors.New("stop")
	if _, err := Alternate(2, func() error { return stop }); err != stop {
		t.Fatalf("error %v, want the function's", err)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
