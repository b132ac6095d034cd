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

// network builds a Network from arcs (bwd == fwd means undirected).
func network(t *testing.T, n int, arcs []arc) *Network {
	t.Helper()
	g, err := NewNetwork(n, len(arcs))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range arcs {
		switch e.bwd {
		case 0:
			err = g.AddEdge(e.u, e.v, e.fwd)
		case e.fwd:
			err = g.AddUndirected(e.u, e.v, e.fwd)
		default:
			t.Fatalf("arc %+v: unsupported capacities", e)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// TestMaxFlowBruteForce checks all three algorithms (push-relabel, Dinic's,
// and MaxFlow's switch from one to the other after any phase) against every s–t cut of
// small random networks: the flow value, and that the reported cuts are the
// extreme minimum cuts (smallest source side, smallest sink side).
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
			} else {
				arcs = append(arcs, arc{u, v, c, 0})
			}
		}
		best, srcMin, sinkMin := bruteMinCut(n, arcs, s, sink)

		pr := network(t, n, arcs)
		flow, err := pr.maxFlow(s, sink, 0)
		if err != nil {
			t.Fatal(err)
		}
		if flow != best {
			t.Fatalf("case %d: push-relabel max flow %d, brute-force min cut %d", tc, flow, best)
		}
		prSnk, _ := pr.SinkSet()
		// MaxFlow's switch from Dinic's phases to push-relabel, after
		// every number of phases: same value, same smallest sink side.
		for _, budget := range []int{0, 1, 2, 4, 8, 16, 32, 64, 128} {
			h := network(t, n, arcs)
			f, err := h.maxFlow(s, sink, budget)
			if err != nil {
				t.Fatal(err)
			}
			if f != best {
				t.Fatalf("case %d: Dinic for %d arc scans then push-relabel: max flow %d, brute-force min cut %d", tc, budget, f, best)
			}
			hSnk, _ := h.SinkSet()
			for v := range hSnk {
				if hSnk[v] != sinkMin[v] {
					t.Fatalf("case %d: Dinic for %d arc scans then push-relabel: SinkSet[%d]=%v, smallest min-cut sink side has %v", tc, budget, v, hSnk[v], sinkMin[v])
				}
			}
		}
		g := network(t, n, arcs)
		if flow, err = g.MaxFlowDinic(s, sink); err != nil {
			t.Fatal(err)
		}
		if flow != best {
			t.Fatalf("case %d: Dinic max flow %d, brute-force min cut %d", tc, flow, best)
		}
		src, _ := g.SourceSet()
		snk, _ := g.SinkSet()
		for v := range snk {
			if prSnk[v] != snk[v] {
				t.Fatalf("case %d: sink sets differ: push-relabel %v, Dinic %v", tc, prSnk, snk)
			}
		}
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
	arcs := []arc{{0, 1, 16, 0}, {0, 2, 13, 0}, {2, 1, 4, 0}, {1, 3, 12, 0}, {3, 2, 9, 0},
		{2, 4, 14, 0}, {4, 3, 7, 0}, {3, 5, 20, 0}, {4, 5, 4, 0}}
	want := []bool{false, false, false, true, false, true} // sink side {v3, t}
	for _, alg := range []string{"push-relabel", "dinic", "mixed"} {
		g := network(t, 6, arcs)
		var f int64
		var err error
		switch alg {
		case "dinic":
			f, err = g.MaxFlowDinic(0, 5)
		case "mixed":
			f, err = g.MaxFlow(0, 5)
		default:
			f, err = g.maxFlow(0, 5, 0)
		}
		if err != nil || f != 23 {
			t.Fatalf("%s: max flow = %d, %v; want 23", alg, f, err)
		}
		snk, _ := g.SinkSet()
		for v := range want {
			if snk[v] != want[v] {
				t.Fatalf("%s: sink set %v, want %v", alg, snk, want)
			}
		}
	}
}

// TestMaxFlowLongPath checks that a path far longer than any goroutine stack
// would allow for a recursive DFS is handled.
func TestMaxFlowLongPath(t *testing.T) {
	const n = 200000
	var arcs []arc
	for v := 0; v+1 < n; v++ {
		c := int64(5 + v%7)
		if v == n/2 {
			c = 3
		}
		arcs = append(arcs, arc{v, v + 1, c, 0})
	}
	for _, alg := range []string{"push-relabel", "dinic", "mixed"} {
		g := network(t, n, arcs)
		var f int64
		var err error
		switch alg {
		case "dinic":
			f, err = g.MaxFlowDinic(0, n-1)
		case "mixed":
			f, err = g.MaxFlow(0, n-1)
		default:
			f, err = g.maxFlow(0, n-1, 0)
		}
		if err != nil || f != 3 {
			t.Fatalf("%s: max flow = %d, %v; want 3", alg, f, err)
		}
		snk, _ := g.SinkSet()
		if snk[n/2] || !snk[n/2+1] {
			t.Fatalf("%s: cut not at the bottleneck arc", alg)
		}
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
	if err := g.AddUndirected(0, 1, 1<<62); err == nil {
		t.Error("undirected 2^62 edge accepted")
	}
	if _, err := g.SourceSet(); err == nil {
		t.Error("SourceSet before MaxFlow accepted")
	}
	if _, err := g.SinkSet(); err == nil {
		t.Error("SinkSet before MaxFlow accepted")
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
	if f, err := h.maxFlow(0, 1, 0); err != nil || f != 0 { // push-relabel alone: a preflow
		t.Fatalf("empty network: %d, %v", f, err)
	}
	if err := h.AddEdge(0, 1, 1); err == nil {
		t.Error("AddEdge after MaxFlow accepted")
	}
	if _, err := h.MaxFlow(0, 1); err == nil {
		t.Error("second MaxFlow accepted")
	}
	if _, err := h.MaxFlowDinic(0, 1); err == nil {
		t.Error("MaxFlowDinic after MaxFlow accepted")
	}
	if _, err := h.SourceSet(); err == nil {
		t.Error("SourceSet after a preflow accepted")
	}
	if _, err := h.SinkSet(); err != nil {
		t.Error(err)
	}
}
