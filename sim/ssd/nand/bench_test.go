package nand

import (
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// BenchmarkReadStream measures the DES core's speed on a large synthetic
// sequential read stream: 2^17 pages (4 GiB) over the rosemary preset's
// 16 x 4 x 2 x 2 flash array, all queued at time 0. It reports simulated
// events per wall-clock second ("events/s") and the events per page.
//
// Measured here (2-core AMD EPYC shared with other jobs, load average ~5):
// `go test ./sim/ssd/nand -run XXX -bench ReadStream -benchtime 10x -count 3`
// gave 3.2-3.8 million events/s, 2.0 events per page (262k events, 70-80 ms
// per 4 GiB stream); the raw event loop (BenchmarkEventChain in sim/eventsim)
// gave 3.0-9.0 million events/s depending on load.
func BenchmarkReadStream(b *testing.B) {
	g := preset(b, "rosemary")
	const pages = 1 << 17
	var events uint64
	var wall time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s := eventsim.New()
		a, err := New(s, g, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for p := int64(0); p < pages; p++ {
			if err := a.Read(p, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		events += s.Fired()
		if a.Stats().PagesRead != pages {
			b.Fatalf("read %d pages", a.Stats().PagesRead)
		}
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N)/pages, "events/page")
}
