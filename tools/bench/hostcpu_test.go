package bench

import (
	"testing"
	"time"
)

// A segment's cores: the device's and this process's CPU seconds over
// its wall time, the rest of the machine's busy time beside them; segments
// weigh by their length.
func TestRoundCores(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	c0 := cpuClock{wall: t0, device: 10, client: 5, system: 100, ok: true}
	c1 := cpuClock{wall: t0.Add(2 * time.Second), device: 13, client: 6, system: 107, ok: true}
	got := c1.since(c0)
	if want := (RoundCores{Device: 1.5, Client: 0.5, Other: 1.5}); got != want {
		t.Fatalf("cores %+v, want %+v", got, want)
	}
	if u := c1.since(cpuClock{wall: t0}); u != (RoundCores{}) {
		t.Fatalf("from an unread clock: %+v, want zero", u)
	}
	var s coreSums
	s.add(RoundCores{Device: 2, Client: 0, Other: 1}, 1)
	s.add(RoundCores{Device: 0.5, Client: 1, Other: 0}, 3)
	if want := (RoundCores{Device: 0.875, Client: 0.75, Other: 0.25}); s.mean() != want {
		t.Fatalf("weighed mean %+v, want %+v", s.mean(), want)
	}
	if busy, ok := machineCPU(); ok && busy <= 0 {
		t.Fatalf("the machine's busy time: %v s", busy)
	}
}
