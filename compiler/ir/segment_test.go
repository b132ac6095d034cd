package ir

import (
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/internal/jsontest"
)

// TestSegmentHints: the builder stamps the current hint on the nodes it
// adds, Segment returns the previous hint, the hint survives a JSON round
// trip, and an unknown hint is rejected with its name.
func TestSegmentHints(t *testing.T) {
	b := NewBuilder("seg", "insecure-test")
	x := b.Input("x", 1)
	if prev := b.Segment(Linear); prev != Unhinted {
		t.Errorf("first Segment returned %q", prev)
	}
	y := b.HAdd(x, x)
	if prev := b.Segment(NonLinear); prev != Linear {
		t.Errorf("Segment returned %q, want linear", prev)
	}
	z := b.MulRelin(y, y)
	b.Segment(Unhinted)
	b.Output("z", z)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{Unhinted, Linear, NonLinear, NonLinear, Unhinted}
	if len(p.Nodes) != len(want) {
		t.Fatalf("%d nodes, want %d", len(p.Nodes), len(want))
	}
	for i, n := range p.Nodes {
		if n.Segment != want[i] {
			t.Errorf("node %d (%s) hinted %q, want %q", i, n.Op, n.Segment, want[i])
		}
	}
	q := jsontest.RoundTrip(t, p)
	for i := range q.Nodes {
		if q.Nodes[i].Segment != p.Nodes[i].Segment {
			t.Errorf("node %d hint %q after round trip, want %q", i, q.Nodes[i].Segment, p.Nodes[i].Segment)
		}
	}
	p.Nodes[1].Segment = "sideways"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `"sideways"`) {
		t.Errorf("unknown hint: %v", err)
	}
}
