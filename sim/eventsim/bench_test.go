package eventsim

import (
	"testing"
	"time"
)

// BenchmarkEventChain: the raw event loop with 1024 concurrent self-
// rescheduling event chains (heap of ~1024 pending events), reporting
// events per wall-clock second.
func BenchmarkEventChain(b *testing.B) {
	s := New()
	left := b.N
	var tick func()
	tick = func() {
		if left > 0 {
			left--
			s.After(Time(1+left%97)*Nanosecond, tick)
		}
	}
	for i := 0; i < 1024; i++ {
		s.At(Time(i), tick)
	}
	b.ResetTimer()
	start := time.Now()
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(s.Fired())/time.Since(start).Seconds(), "events/s")
}
