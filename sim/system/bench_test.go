package system

import (
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/ir"
	"github.com/rosemary-fhe/rosemary/workload"
)

// largestWorkload is the shipped workload with the most node instances
// (the simulator's work grows with them): vecdist (Deep1B) today.
func largestWorkload(tb testing.TB) (string, *ir.Program) {
	tb.Helper()
	var best string
	var bestProg *ir.Program
	var most int64
	for _, w := range workload.Names() {
		p, err := workload.Program(w)
		if err != nil {
			tb.Fatal(err)
		}
		var n int64
		for _, nd := range p.Nodes {
			n += nd.Count
		}
		if n > most {
			best, bestProg, most = w, p, n
		}
	}
	return best, bestProg
}

// BenchmarkSimulateLargest tracks the simulator's speed: the largest
// shipped workload at full scale, compiled with --opt full and simulated
// as Rosemary with the default tiling, reporting simulated events per
// wall-clock second and the simulated latency.
//
//	go test ./sim/system -run XXX -bench SimulateLargest -benchtime 5x
func BenchmarkSimulateLargest(b *testing.B) {
	a := preset(b, "rosemary")
	name, p := largestWorkload(b)
	plan := compile(b, p, a, "full")
	var events uint64
	var wall time.Duration
	var lat float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := Run(plan, a, Rosemary, Options{})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		events += r.Report.SimEvents
		lat = r.Report.LatencyS
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(lat, "sim_s")
	b.Logf("workload %s", name)
}
