package system

import (
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler/workload"
)

// BenchmarkSimulate tracks the simulator's speed on every shipped workload
// at full scale (the largest included, whichever measure of size is used),
// compiled with --opt full and simulated as Rosemary with the default
// tiling. It reports simulated events per wall-clock second, events per
// run and the simulated latency (sim_s).
//
//	go test ./sim/system -run XXX -bench Simulate -benchtime 3x
func BenchmarkSimulate(b *testing.B) {
	a := preset(b, "rosemary")
	for _, w := range workload.Names() {
		b.Run(w, func(b *testing.B) {
			p, err := workload.Program(w)
			if err != nil {
				b.Fatal(err)
			}
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
		})
	}
}
