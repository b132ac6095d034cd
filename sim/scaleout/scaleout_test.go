package scaleout

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/system"
)

// The projection's trends: every workload gains nearly K× while its SSDs
// bind; PIR, whose every SSD still receives all column selections, stops
// scaling when the shared upstream link binds, and slows down past it.
func TestScaleOutTrends(t *testing.T) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{1, 2, 4, 8, 16, 32, 64}
	for _, w := range Workloads() {
		ps, err := Project(w, a, ks, system.Options{MaxTiles: 256, TileBudget: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		linkBound := false
		for i, p := range ps {
			if p.Binding == "host link" {
				linkBound = true
			}
			if !linkBound && p.K <= 8 && p.Efficiency < 0.9 {
				t.Errorf("%s at %d SSDs: efficiency %.3f with the SSDs binding", w.Name, p.K, p.Efficiency)
			}
			if i > 0 && !linkBound && p.Speedup <= ps[i-1].Speedup {
				t.Errorf("%s: speedup falls from %.2f to %.2f before anything but the SSDs binds", w.Name, ps[i-1].Speedup, p.Speedup)
			}
			if p.TotalS < max(p.ShardS, p.LinkS) {
				t.Errorf("%s at %d: total %.3g below its parts", w.Name, p.K, p.TotalS)
			}
		}
		switch w.Name {
		case "pir":
			if !linkBound || ps[len(ps)-1].Speedup >= ps[len(ps)-2].Speedup {
				t.Errorf("pir: the host link should bind by 64 SSDs and the speedup fall past it: %+v", ps[len(ps)-1])
			}
		default:
			if last := ps[len(ps)-1]; last.Efficiency < 0.9 {
				t.Errorf("%s: efficiency %.3f at 64 SSDs (its results are small beside its scan)", w.Name, last.Efficiency)
			}
		}
	}
}
