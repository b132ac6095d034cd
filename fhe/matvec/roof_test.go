package matvec

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestRoofLoopsRunEveryInstruction: each register loop's accumulators hold
// what n iterations of its twelve multiply-adds of ones give (vpdpbusd: 4
// per lane each, vpmaddwd: 2), so Roof times the instructions it counts.
func TestRoofLoopsRunEveryInstruction(t *testing.T) {
	for _, k := range kernels() {
		loop, perIter := roofLoop(k)
		if k == kernelGo {
			if loop != nil || perIter != 0 {
				t.Fatalf("the Go kernel has a roof loop")
			}
			continue
		}
		per := map[kernel]uint32{kernelVNNI: 48, kernelAVX2: 24}[k]
		for _, n := range []int{0, 1, 7, 1000} {
			if got := loop(n); got != per*uint32(n) {
				t.Fatalf("%v: %d iterations gave %d, want %d", k, n, got, per*uint32(n))
			}
		}
	}
}

func TestRoofArgs(t *testing.T) {
	if _, err := Roof(context.Background(), 1, 0); err == nil && active != kernelGo {
		t.Fatal("a roof over no time")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Roof(ctx, 1, 10*time.Millisecond); err == nil && active != kernelGo {
		t.Fatal("a cancelled roof measurement succeeded")
	}
}

// BenchmarkRoof reports the compute ceiling on one core and on every core.
func BenchmarkRoof(b *testing.B) {
	for _, cores := range []int{1, 0} {
		b.Run(fmt.Sprintf("cores=%d", cores), func(b *testing.B) {
			var r float64
			for range b.N {
				var err error
				if r, err = Roof(context.Background(), cores, 500*time.Millisecond); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r/1e9, "query-GB/s")
		})
	}
}
