package tdap

import (
	"math/rand"
	"testing"
)

// layered builds a synthetic program DAG of n nodes in layers of the given
// width. Every node outside the first layer has 1–3 predecessors in the
// previous layer. The first layer holds client inputs (pinned to the host);
// the last layer holds outputs (pinned to the host). In every other layer a
// node is, with probability stored, a stored object (pinned to the SSD, no
// predecessors) whose outgoing edges are 10–100× heavier, like a database or
// weight operand. Costs follow the paper's D(SSD) ≥ D(Host): D(Host) in
// [1, 1000], D(SSD) in [D(Host), 3·D(Host)], and T_comm in [1, 1000].
func layered(rng *rand.Rand, n, width int, stored float64) Problem {
	p := Problem{Nodes: make([]Node, n), Edges: make([]Edge, 0, 2*n)}
	for i := range p.Nodes {
		h := 1 + rng.Int63n(1000)
		nd := Node{CostHost: h, CostSSD: h + rng.Int63n(2*h+1)}
		switch {
		case i < width:
			nd = Node{Pin: PinHost}
		case i >= n-width:
			nd.Pin = PinHost
		case rng.Float64() < stored:
			nd = Node{Pin: PinSSD}
		}
		p.Nodes[i] = nd
	}
	for i := width; i < n; i++ {
		if p.Nodes[i].Pin == PinSSD {
			continue
		}
		lo := (i/width - 1) * width
		k := 1 + rng.Intn(3)
		for j := 0; j < k; j++ {
			from := lo + rng.Intn(width)
			c := 1 + rng.Int63n(1000)
			if p.Nodes[from].Pin == PinSSD {
				c *= 10 + rng.Int63n(91)
			}
			p.Edges = append(p.Edges, Edge{From: from, To: i, Comm: c})
		}
	}
	return p
}

// BenchmarkSolve1M partitions a 10^6-node layered DAG (1000 layers of 1000
// nodes, about 1.7·10^6 dependency edges, 15% stored objects; the optimal
// placement puts about half the nodes on each device, the hardest mix).
func BenchmarkSolve1M(b *testing.B) {
	p := layered(rand.New(rand.NewSource(1)), 1_000_000, 1000, 0.15)
	b.ReportAllocs()
	b.ResetTimer()
	var a Assignment
	var c int64
	for i := 0; i < b.N; i++ {
		var err error
		a, c, err = Solve(p)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_, ssd := a.Count()
	b.ReportMetric(float64(len(p.Edges)), "edges")
	b.ReportMetric(float64(ssd), "ssd-nodes")
	b.ReportMetric(float64(c), "cost")
}
