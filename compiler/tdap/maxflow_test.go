package tdap

import (
	"math/rand"
	"testing"
)

type arc struct {
	u, v     int
	fwd, bwd int64
}

// cutCapacity is the capacity of the cut (S, V∖S): arcs leaving S.
func cutCapacity(arcs []arc, inS []bool) int64 {
	var c int64
	for _, e := range arcs {
		if inS[e.u] && !inS[e.v] {
			c += e.fwd
		}
		if inS[e.v] && !inS[e.u] {
			c += e.bwd
		}
	}
	return c
}

// bruteMinCut enumerates every s–t cut of a small network and returns the
// minimum capacity and the intersections of the source sides and of the sink
// sides of all minimum cuts.
func bruteMinCut(n int, arcs []arc, s, t int) (best int64, srcMin, sinkMin []bool) {
	best = -1
	inS := make([]bool, n)
	for mask := 0; mask < 1<<n; mask++ {
		if mask>>s&1 == 0 || mask>>t&1 == 1 {
			continue
		}
		for v := 0; v < n; v++ {
			inS[v] = mask>>v&1 == 1
		}
		c := cutCapacity(arcs, inS)
		switch {
		case best < 0 || c < best:
			best = c
			srcMin = append([]bool(nil), inS...)
			sinkMin = make([]bool, n)
			for v := range inS {
				sinkMin[v] = !inS[v]
			}
		case c == best:
			for v := range inS {
				srcMin[v] = srcMin[v] && inS[v]
				sinkMin[v] = sinkMin[v] && !inS[v]
			}
		}
	}
	return best, srcMin, sinkMin
}

func TestMaxFlowBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for tc := 0; tc < 400; tc++ {
		n := 2 + rng.Intn(9)
		s, sink := 0, n-1
		if tc%3 == 1 {
			s, sink = rng.Intn(n), rng.Intn(n)
			if s == sink {
				sink = (s + 1) % n
			}
		}
		g, err := NewNetwork(n, 0)
		if err != nil {
			t.Fatal(err)
		}
		var arcs []arc
		m := rng.Intn(3 * n)
		for k := 0; k < m; k++ {
			u, v := rng.Intn(n), rng.Intn(n)
			if u == v {
				continue
			}
			c := rng.Int63n(20)
			if rng.Intn(4) == 0 {
				c = 0
			}
			if rng.Intn(3) == 0 {
				arcs = append(arcs, arc{u, v, c, c})
				err = g.AddUndirected(u, v, c)
			} else {
				arcs = append(arcs, arc{u, v, c, 0})
				err = g.AddEdge(u, v, c)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		flow, err := g.MaxFlow(s, sink)
		if err != nil {
			t.Fatal(err)
		}
		best, srcMin, sinkMin := bruteMinCut(n, arcs, s, sink)
		if flow != best {
			t.Fatalf("case %d: max flow %d, brute-force min cut %d", tc, flow, best)
		}
		src, _ := g.SourceSet()
		snk, _ := g.SinkSet()
		if c := cutCapacity(arcs, src); c != best {
			t.Fatalf("case %d: SourceSet cut capacity %d, want %d", tc, c, best)
		}
		notSnk := make([]bool, n)
		for v := range snk {
			notSnk[v] = !snk[v]
		}
		if c := cutCapacity(arcs, notSnk); c != best {
			t.Fatalf("case %d: SinkSet cut capacity %d, want %d", tc, c, best)
		}
		for v := 0; v < n; v++ {
			if src[v] != srcMin[v] {
				t.Fatalf("case %d: SourceSet[%d]=%v, smallest min-cut source side has %v", tc, v, src[v], srcMin[v])
			}
			if snk[v] != sinkMin[v] {
				t.Fatalf("case %d: SinkSet[%d]=%v, smallest min-cut sink side has %v", tc, v, snk[v], sinkMin[v])
			}
		}
	}
}

// TestMaxFlowKnown is the textbook CLRS network (max flow 23).
func TestMaxFlowKnown(t *testing.T) {
	g, _ := NewNetwork(6, 9)
	for _, e := range []arc{{0, 1, 16, 0}, {0, 2, 13, 0}, {2, 1, 4, 0}, {1, 3, 12, 0}, {3, 2, 9, 0},
		{2, 4, 14, 0}, {4, 3, 7, 0}, {3, 5, 20, 0}, {4, 5, 4, 0}} {
		if err := g.AddEdge(e.u, e.v, e.fwd); err != nil {
			t.Fatal(err)
		}
	}
	f, err := g.MaxFlow(0, 5)
	if err != nil || f != 23 {
		t.Fatalf("max flow = %d, %v; want 23", f, err)
	}
	src, _ := g.SourceSet()
	want := []bool{true, true, true, false, true, false}
	for v := range want {
		if src[v] != want[v] {
			t.Fatalf("source set %v, want %v", src, want)
		}
	}
}

// TestMaxFlowLongPath checks that a path far longer than any goroutine stack
// would allow for a recursive DFS is handled.
func TestMaxFlowLongPath(t *testing.T) {
	const n = 200000
	g, _ := NewNetwork(n, n)
	for v := 0; v+1 < n; v++ {
		c := int64(5 + v%7)
		if v == n/2 {
			c = 3
		}
		if err := g.AddEdge(v, v+1, c); err != nil {
			t.Fatal(err)
		}
	}
	f, err := g.MaxFlow(0, n-1)
	if err != nil || f != 3 {
		t.Fatalf("max flow = %d, %v; want 3", f, err)
	}
	src, _ := g.SourceSet()
	if !src[n/2] || src[n/2+1] {
		t.Fatalf("cut not at the bottleneck arc")
	}
}

func TestNetworkErrors(t *testing.T) {
	if _, err := NewNetwork(1, 0); err == nil {
		t.Error("NewNetwork(1) accepted")
	}
	g, _ := NewNetwork(3, 0)
	for _, e := range []arc{{-1, 1, 1, 0}, {0, 3, 1, 0}, {1, 1, 1, 0}, {0, 1, -1, 0}} {
		if err := g.AddEdge(e.u, e.v, e.fwd); err == nil {
			t.Errorf("AddEdge(%d, %d, %d) accepted", e.u, e.v, e.fwd)
		}
	}
	if _, err := g.SourceSet(); err == nil {
		t.Error("SourceSet before MaxFlow accepted")
	}
	if _, err := g.MaxFlow(1, 1); err == nil {
		t.Error("MaxFlow(s == t) accepted")
	}
	if err := g.AddEdge(0, 1, 1<<62); err != nil {
		t.Fatal(err)
	}
	if err := g.AddEdge(0, 2, 1<<62); err != nil {
		t.Fatal(err)
	}
	if err := g.AddEdge(0, 2, 1<<62); err != nil {
		t.Fatal(err)
	}
	if _, err := g.MaxFlow(0, 2); err == nil {
		t.Error("overflowing source capacity accepted")
	}
	h, _ := NewNetwork(2, 0)
	if f, err := h.MaxFlow(0, 1); err != nil || f != 0 {
		t.Fatalf("empty network: %d, %v", f, err)
	}
	if err := h.AddEdge(0, 1, 1); err == nil {
		t.Error("AddEdge after MaxFlow accepted")
	}
	if _, err := h.MaxFlow(0, 1); err == nil {
		t.Error("second MaxFlow accepted")
	}
}
