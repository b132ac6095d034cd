package main

import (
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/e2e"
)

// At 10 MB/s and 100 ms: 100 s + 1 GB / 10 MB/s + 1000 flights × 50 ms =
// 250 s for the first session, 50 + 50 + 50 = 150 s for the second: 0.6.
func TestAddSweep(t *testing.T) {
	runs := []e2eRun{
		{Report: &e2e.Report{Protocol: "cheetah", WallS: 100, BytesC2S: 4e8, BytesS2C: 6e8, Flights: 1000}},
		{Report: &e2e.Report{Protocol: "optiprime", WallS: 50, BytesC2S: 2e8, BytesS2C: 3e8, Flights: 1000}},
	}
	if err := addSweep(runs); err != nil {
		t.Fatal(err)
	}
	found := false
	for j, p := range runs[0].Sweep {
		if p.BandwidthMBps != 10 || p.RTTms != 100 {
			continue
		}
		found = true
		q := runs[1].Sweep[j]
		if math.Abs(p.TotalS-250) > 1e-9 || math.Abs(q.TotalS-150) > 1e-9 || math.Abs(q.Ratio-0.6) > 1e-12 || p.Ratio != 0 {
			t.Fatalf("10 MB/s, 100 ms: %+v and %+v, want 250 s, 150 s, ratio 0.6", p, q)
		}
	}
	if !found {
		t.Fatal("the sweep has no 10 MB/s, 100 ms point")
	}
	if n := len(runs[0].Sweep); n != 7*9 {
		t.Fatalf("%d points, want 7 bandwidths × 9 RTTs", n)
	}
}
