package tdap

import (
	"errors"
	"fmt"
	"math"
)

// Network is a flow network with two max-flow algorithms: MaxFlow (Dinic's
// first phases, then push-relabel; the default) and MaxFlowDinic (Dinic's
// alone). Capacities are int64 in whatever additive unit the caller uses
// (Solve passes cost units, see the package documentation); they must be
// non-negative and the sum of the capacities leaving the source must fit in
// an int64.
//
// Edges are collected by AddEdge/AddUndirected and turned into a compressed
// adjacency array (CSR: one flat array of arcs, grouped by tail, plus an
// offset per node) when the max flow is computed. Every arc is paired with its
// reverse arc, so the residual graph needs no extra storage; an undirected
// edge of capacity c is a single pair whose two arcs both start at c. Node
// and arc indices are int32, which bounds a network at 2^31-2 nodes and
// 2^31-1 arcs. All traversals are iterative, so path length is bounded by
// memory, never by the goroutine stack.
//
// A minimum cut is read from the residual graph afterwards: SinkSet is its
// sink side (the complement is the source side).
type Network struct {
	n int

	// Edge list, consumed when the CSR form is built.
	eu, ev     []int32
	eFwd, eRev []int64

	// CSR form: arcs of node u are arcs[start[u]:start[u+1]].
	start []int32
	arcs  []flowArc

	// Dinic's working arrays.
	level []int32
	iter  []int32
	queue []int32

	built    bool
	solved   bool // a max flow (or max preflow) has been computed
	complete bool // it is a flow, not only a preflow
	s, t     int32
}

// flowArc is one arc of the residual graph; its fields share a cache line.
type flowArc struct {
	head int32 // node the arc points to
	rev  int32 // index of the paired reverse arc
	cap  int64 // residual capacity
}

// NewNetwork returns an empty network on n nodes numbered 0..n-1; edgeHint
// is the expected number of AddEdge/AddUndirected calls (0 if unknown).
func NewNetwork(n, edgeHint int) (*Network, error) {
	// Labels go up to n and are incremented, so n+1 must fit in an int32.
	if n < 2 || n > math.MaxInt32-1 {
		return nil, fmt.Errorf("tdap: network size %d out of range [2, %d]", n, math.MaxInt32-1)
	}
	if edgeHint < 0 || edgeHint > math.MaxInt32/2 {
		edgeHint = 0
	}
	return &Network{
		n:    n,
		eu:   make([]int32, 0, edgeHint),
		ev:   make([]int32, 0, edgeHint),
		eFwd: make([]int64, 0, edgeHint),
		eRev: make([]int64, 0, edgeHint),
	}, nil
}

// Len is the number of nodes.
func (g *Network) Len() int { return g.n }

// AddEdge adds a directed edge u→v of capacity c.
func (g *Network) AddEdge(u, v int, c int64) error { return g.add(u, v, c, 0) }

// AddUndirected adds an edge between u and v that can carry up to c units in
// either direction (net), represented as one pair of arcs of capacity c each.
func (g *Network) AddUndirected(u, v int, c int64) error { return g.add(u, v, c, c) }

func (g *Network) add(u, v int, fwd, bwd int64) error {
	if g.built {
		return errors.New("tdap: network: edge added after MaxFlow")
	}
	if u < 0 || u >= g.n || v < 0 || v >= g.n {
		return fmt.Errorf("tdap: network: edge %d→%d out of range [0, %d)", u, v, g.n)
	}
	if u == v {
		return fmt.Errorf("tdap: network: self-loop on node %d", u)
	}
	if fwd < 0 || bwd < 0 {
		return fmt.Errorf("tdap: network: edge %d→%d has negative capacity", u, v)
	}
	// A residual capacity can reach the sum of both directions.
	if fwd > math.MaxInt64-bwd {
		return fmt.Errorf("tdap: network: edge %d→%d capacity overflows int64 in the residual graph", u, v)
	}
	if 2*len(g.eu)+2 > math.MaxInt32 {
		return errors.New("tdap: network: too many edges for int32 arc indices")
	}
	g.eu = append(g.eu, int32(u))
	g.ev = append(g.ev, int32(v))
	g.eFwd = append(g.eFwd, fwd)
	g.eRev = append(g.eRev, bwd)
	return nil
}

// build turns the edge list into the CSR arc arrays (a counting sort by tail).
func (g *Network) build() {
	n := g.n
	m := len(g.eu)
	start := make([]int32, n+1)
	for i := 0; i < m; i++ {
		start[g.eu[i]+1]++
		start[g.ev[i]+1]++
	}
	for u := 0; u < n; u++ {
		start[u+1] += start[u]
	}
	pos := make([]int32, n)
	copy(pos, start[:n])
	arcs := make([]flowArc, 2*m)
	for i := 0; i < m; i++ {
		u, v := g.eu[i], g.ev[i]
		a, b := pos[u], pos[v]
		pos[u]++
		pos[v]++
		arcs[a] = flowArc{head: v, rev: b, cap: g.eFwd[i]}
		arcs[b] = flowArc{head: u, rev: a, cap: g.eRev[i]}
	}
	g.start, g.arcs = start, arcs
	g.eu, g.ev, g.eFwd, g.eRev = nil, nil, nil, nil
	g.built = true
}

// prepare checks the terminals and the source capacity and builds the CSR
// form; it is shared by both algorithms.
func (g *Network) prepare(s, t int) error {
	if g.solved {
		return errors.New("tdap: network: max flow computed twice")
	}
	if s < 0 || s >= g.n || t < 0 || t >= g.n || s == t {
		return fmt.Errorf("tdap: network: terminals s=%d t=%d invalid for %d nodes", s, t, g.n)
	}
	var out int64
	for i := range g.eu {
		if int(g.eu[i]) == s {
			out += g.eFwd[i]
		} else if int(g.ev[i]) == s {
			out += g.eRev[i]
		}
		if out < 0 {
			return errors.New("tdap: network: source capacity overflows int64")
		}
	}
	g.build()
	g.s, g.t = int32(s), int32(t)
	g.solved = true
	return nil
}

// MaxFlowDinic computes a maximum s–t flow with Dinic's algorithm and returns
// its value. Only one of MaxFlow and MaxFlowDinic may be called, once;
// afterwards SinkSet (and, for Dinic, SourceSet) describe minimum cuts.
//
// Dinic augments one path at a time, so its work grows with the total length
// of the augmenting paths; on deep programs whose flow must travel far
// (long chains on one device) MaxFlow is much faster. It is kept as an
// independent cross-check and because it leaves a complete flow.
func (g *Network) MaxFlowDinic(s, t int) (int64, error) {
	if err := g.prepare(s, t); err != nil {
		return 0, err
	}
	flow, _ := g.dinic(math.MaxInt)
	g.complete = true
	return flow, nil
}

// dinic runs Dinic's phases on the prepared network while their work (arcs
// scanned, counting a whole breadth-first search per phase) stays within
// budget, and returns the flow found; done reports that it is a maximum
// flow (no augmenting path is left). The budget is checked between phases.
func (g *Network) dinic(budget int) (flow int64, done bool) {
	if budget <= 0 {
		return 0, false
	}
	g.level = make([]int32, g.n)
	g.iter = make([]int32, g.n)
	g.queue = make([]int32, 0, g.n)
	work := 0
	for work < budget {
		if !g.bfs() {
			return flow, true
		}
		copy(g.iter, g.start[:g.n])
		f, scanned := g.augment()
		flow += f
		work += len(g.arcs) + scanned
	}
	return flow, !g.bfs()
}

// bfs labels nodes with their distance from s in the residual graph and
// reports whether t is reachable. Expansion stops at t's level: nodes at or
// beyond it cannot lie on a shortest augmenting path.
func (g *Network) bfs() bool {
	level := g.level
	for i := range level {
		level[i] = -1
	}
	q := g.queue[:0]
	level[g.s] = 0
	q = append(q, g.s)
	tl := int32(math.MaxInt32)
	for i := 0; i < len(q); i++ {
		u := q[i]
		lu := level[u]
		if lu+1 > tl {
			break
		}
		for _, e := range g.arcs[g.start[u]:g.start[u+1]] {
			v := e.head
			if level[v] < 0 && e.cap > 0 {
				level[v] = lu + 1
				if v == g.t {
					tl = lu + 1
				} else {
					q = append(q, v)
				}
			}
		}
	}
	g.queue = q
	return level[g.t] >= 0
}

// augment finds a blocking flow in the level graph with an explicit path
// stack (iterative DFS with current-arc pointers) and returns its value and
// the number of arcs it scanned.
func (g *Network) augment() (total int64, scanned int) {
	s, t := g.s, g.t
	level, iter, start, arcs := g.level, g.iter, g.start, g.arcs
	path := g.queue[:0] // the BFS queue is free during augmentation
	u := s
	for {
		if u == t {
			b := int64(math.MaxInt64)
			cut := 0
			for i, a := range path {
				if c := arcs[a].cap; c < b {
					b, cut = c, i
				}
			}
			for _, a := range path {
				arcs[a].cap -= b
				arcs[arcs[a].rev].cap += b
			}
			total += b
			u = arcs[arcs[path[cut]].rev].head
			path = path[:cut]
			continue
		}
		lu := level[u] + 1
		a, end := iter[u], start[u+1]
		from := a
		for a < end && (arcs[a].cap == 0 || level[arcs[a].head] != lu) {
			a++
		}
		scanned += int(a-from) + 1
		iter[u] = a
		if a < end {
			path = append(path, a)
			u = arcs[a].head
			continue
		}
		// Dead end: retire u from this phase and retreat one arc.
		if u == s {
			break
		}
		level[u] = -1
		last := path[len(path)-1]
		path = path[:len(path)-1]
		u = arcs[arcs[last].rev].head
		iter[u]++
	}
	g.queue = path[:0]
	return total, scanned
}

// SourceSet reports, after MaxFlowDinic, the nodes reachable from s in the
// residual graph: the source side of the minimum cut whose source side is
// smallest (it is contained in the source side of every minimum cut). It
// needs a complete flow, which MaxFlow leaves only when Dinic's phases
// finished it (push-relabel leaves a maximum preflow).
func (g *Network) SourceSet() ([]bool, error) {
	if !g.complete {
		return nil, errors.New("tdap: network: SourceSet needs a complete flow (MaxFlowDinic)")
	}
	in := make([]bool, g.n)
	q := make([]int32, 0, g.n)
	in[g.s] = true
	q = append(q, g.s)
	for i := 0; i < len(q); i++ {
		u := q[i]
		for _, e := range g.arcs[g.start[u]:g.start[u+1]] {
			if v := e.head; !in[v] && e.cap > 0 {
				in[v] = true
				q = append(q, v)
			}
		}
	}
	return in, nil
}

// SinkSet reports, after MaxFlow or MaxFlowDinic, the nodes that can reach t
// in the residual graph: the sink side of the minimum cut whose sink side is
// smallest (it is contained in the sink side of every minimum cut). For a
// maximum preflow this set is the same as for the maximum flow it extends
// to: turning the preflow into a flow only changes arcs between nodes that
// cannot reach t.
func (g *Network) SinkSet() ([]bool, error) {
	if !g.solved {
		return nil, errors.New("tdap: network: SinkSet before a max flow")
	}
	in := make([]bool, g.n)
	q := make([]int32, 0, g.n)
	in[g.t] = true
	q = append(q, g.t)
	for i := 0; i < len(q); i++ {
		v := q[i]
		for _, e := range g.arcs[g.start[v]:g.start[v+1]] {
			// The reverse of arc v→u is u→v: u reaches v if it has capacity.
			if u := e.head; !in[u] && g.arcs[e.rev].cap > 0 {
				in[u] = true
				q = append(q, u)
			}
		}
	}
	return in, nil
}
