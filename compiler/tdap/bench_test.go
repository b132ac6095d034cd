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

// deep builds a narrow, deep program: layers of the given width, the first
// of stored objects (pinned to the SSD), the last of outputs (pinned to the
// host), two predecessors per node in the previous layer, D(SSD) only
// slightly above D(Host) and transfers ten times dearer than either. Flow
// has to travel far along the chains, which is what makes Dinic slow here.
func deep(rng *rand.Rand, width, layers int) Problem {
	n := width * layers
	p := Problem{Nodes: make([]Node, n), Edges: make([]Edge, 0, 2*n)}
	for i := range p.Nodes {
		h := 100 + rng.Int63n(10)
		p.Nodes[i] = Node{CostHost: h, CostSSD: h + 1 + rng.Int63n(3)}
		if i < width {
			p.Nodes[i] = Node{Pin: PinSSD}
		}
		if i >= n-width {
			p.Nodes[i].Pin = PinHost
		}
	}
	for i := width; i < n; i++ {
		lo := (i/width - 1) * width
		for j := 0; j < 2; j++ {
			p.Edges = append(p.Edges, Edge{From: lo + rng.Intn(width), To: i, Comm: 1000 + rng.Int63n(1000)})
		}
	}
	return p
}

func benchSolve(b *testing.B, p Problem, alg algorithm) {
	b.ReportAllocs()
	b.ResetTimer()
	var a Assignment
	var c int64
	for i := 0; i < b.N; i++ {
		var err error
		a, c, err = solve(p, alg)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_, ssd := a.Count()
	b.ReportMetric(float64(len(p.Nodes)), "nodes")
	b.ReportMetric(float64(len(p.Edges)), "edges")
	b.ReportMetric(float64(ssd), "ssd-nodes")
	b.ReportMetric(float64(c), "cost")
}

// BenchmarkSolve1M partitions a 10^6-node layered DAG (1000 layers of 1000
// nodes, about 1.7·10^6 dependency edges, 15% stored objects; the optimal
// placement puts about half the nodes on each device, the hardest mix of
// this generator) with Solve (Dinic's first phases, then push-relabel).
func BenchmarkSolve1M(b *testing.B) {
	benchSolve(b, layered(rand.New(rand.NewSource(1)), 1_000_000, 1000, 0.15), hybridAlg)
}

// BenchmarkSolve1MPushRelabel is the same problem with push-relabel alone.
func BenchmarkSolve1MPushRelabel(b *testing.B) {
	benchSolve(b, layered(rand.New(rand.NewSource(1)), 1_000_000, 1000, 0.15), pushRelabelAlg)
}

// BenchmarkSolve1MDinic is the same problem with Dinic's algorithm.
func BenchmarkSolve1MDinic(b *testing.B) {
	benchSolve(b, layered(rand.New(rand.NewSource(1)), 1_000_000, 1000, 0.15), dinicAlg)
}

// BenchmarkSolveDeep1M partitions a 10^6-node program 10 nodes wide and
// 10^5 layers deep with Solve.
func BenchmarkSolveDeep1M(b *testing.B) {
	benchSolve(b, deep(rand.New(rand.NewSource(1)), 10, 100_000), hybridAlg)
}

// BenchmarkSolveDeep160k compares the algorithms on a deep program small
// enough for Dinic (10 wide, 16 000 layers): Solve pays for its first
// Dinic phases before push-relabel finishes.
func BenchmarkSolveDeep160k(b *testing.B) {
	p := deep(rand.New(rand.NewSource(1)), 10, 16_000)
	b.Run("solve", func(b *testing.B) { benchSolve(b, p, hybridAlg) })
	b.Run("push-relabel", func(b *testing.B) { benchSolve(b, p, pushRelabelAlg) })
	b.Run("dinic", func(b *testing.B) { benchSolve(b, p, dinicAlg) })
}
