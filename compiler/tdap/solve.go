package tdap

import (
	"fmt"
	"math"
)

// Solve finds a placement minimising the TDAP objective
//
//	Σ_i D_i(x_i) + Σ_{(i,j) cut} T_comm(i,j) [+ Σ_{i read across} OutComm_i]
//
// over all placements that respect the pins, and returns it with its cost.
//
// It is Stone's two-processor construction: a flow network with the host as
// source s and the SSD as sink t. A node left on the sink side is separated
// from s, so the arc s→v carries D_v(SSD); a node on the source side is
// separated from t, so v→t carries D_v(Host); each dependency is an
// undirected edge of capacity T_comm. Every s–t cut is then a placement and
// its capacity is that placement's objective, so a minimum cut is an optimal
// placement. The cut is computed by Network.MaxFlow (Dinic's first phases,
// then push-relabel).
//
// Pins are not modelled as infinite capacities: a pinned node is merged into
// its terminal, its own cost becomes a constant, and its edges to free nodes
// become terminal arcs (an edge to a host-pinned node is paid exactly when the
// free end goes to the SSD). Edges between two pinned nodes are constants.
// For each free node the common part min(s→v, v→t) is also a constant, so at
// most one terminal arc per node remains.
//
// A node u with OutComm B > 0 gets up to two auxiliary nodes. a stands for
// "u's output is on the SSD": arcs u→a of capacity B and a→w of capacity ∞
// for each free reader w, so a host u with any reader on the SSD pays B
// exactly once. b is the mirror image (b→u of capacity B, w→b of capacity
// ∞) for an SSD u read on the host. A reader pinned to the far device makes
// the charge unconditional on that side (a plain terminal arc); a reader
// pinned to u's own side never triggers it. "∞" is any capacity above the
// largest objective, which Validate bounds.
//
// The construction needs only non-negative costs; the paper's assumption
// D_i(SSD) ≥ D_i(Host) is not required. Among optimal placements Solve
// returns the one whose set of SSD nodes is smallest (it is contained in the
// SSD set of every optimal placement), so ties go to the host.
func Solve(p Problem) (Assignment, int64, error) {
	return solve(p, hybridAlg)
}

// algorithm selects the max-flow algorithm behind Solve (tests and
// benchmarks compare them).
type algorithm int

const (
	hybridAlg      algorithm = iota // Network.MaxFlow: Dinic's first phases, then push-relabel
	pushRelabelAlg                  // push-relabel alone
	dinicAlg                        // Dinic's alone
)

// netArc is an arc waiting for the network to be sized; an endpoint may be
// srcNode or sinkNode, the terminals, whose indices come last.
type netArc struct {
	from, to int32
	c        int64
	both     bool // undirected
}

const (
	srcNode  = -1
	sinkNode = -2
)

func solve(p Problem, alg algorithm) (Assignment, int64, error) {
	bound, err := p.bound()
	if err != nil {
		return nil, 0, err
	}
	inf := bound + 1
	n := len(p.Nodes)
	a := make(Assignment, n)
	// idx[i] is node i's index in the flow network, or srcNode/sinkNode when
	// it is pinned (merged into that terminal).
	idx := make([]int32, n)
	var constant int64
	m := int32(0)
	for i, nd := range p.Nodes {
		switch nd.Pin {
		case PinHost:
			a[i], idx[i] = Host, srcNode
			constant += nd.CostHost
		case PinSSD:
			a[i], idx[i] = SSD, sinkNode
			constant += nd.CostSSD
		default:
			idx[i] = m
			m++
		}
	}

	// toSSD[v] is the cost paid if free node v goes to the SSD (its s→v
	// capacity), toHost[v] the cost if it stays on the host (v→t).
	toSSD := make([]int64, m)
	toHost := make([]int64, m)
	for i, nd := range p.Nodes {
		if v := idx[i]; v >= 0 {
			toSSD[v], toHost[v] = nd.CostSSD, nd.CostHost
		}
	}
	// term adds cost c paid when network node v (free or a terminal) is on
	// the given side.
	term := func(v int32, onSSD bool, c int64) {
		switch {
		case v >= 0 && onSSD:
			toSSD[v] += c
		case v >= 0:
			toHost[v] += c
		case (v == sinkNode) == onSSD:
			constant += c
		}
	}
	arcs := make([]netArc, 0, len(p.Edges)+int(m))
	for _, e := range p.Edges {
		u, v := idx[e.From], idx[e.To]
		switch {
		case u < 0 && v < 0:
			if u != v {
				constant += e.Comm
			}
		case u < 0:
			term(v, u == srcNode, e.Comm)
		case v < 0:
			term(u, v == srcNode, e.Comm)
		case e.Comm > 0:
			arcs = append(arcs, netArc{u, v, e.Comm, true})
		}
	}
	outs := int64(0)
	for _, nd := range p.Nodes {
		if nd.OutComm > 0 {
			outs++
		}
	}
	if int64(m)+2*outs+2 > math.MaxInt32-1 {
		return nil, 0, fmt.Errorf("tdap: solve: %d free nodes and %d OutComm nodes need too large a network", m, outs)
	}
	aux, arcs := outCommArcs(p, idx, m, inf, term, arcs)

	total := int(m) + aux
	s, t := int32(total), int32(total+1)
	for v := int32(0); v < m; v++ {
		c := min(toSSD[v], toHost[v])
		constant += c
		if r := toSSD[v] - c; r > 0 {
			arcs = append(arcs, netArc{srcNode, v, r, false})
		} else if r := toHost[v] - c; r > 0 {
			arcs = append(arcs, netArc{v, sinkNode, r, false})
		}
	}
	if total == 0 {
		return a, constant, nil
	}
	g, err := NewNetwork(total+2, len(arcs))
	if err != nil {
		return nil, 0, fmt.Errorf("tdap: solve: %w", err)
	}
	at := func(v int32) int {
		switch v {
		case srcNode:
			return int(s)
		case sinkNode:
			return int(t)
		}
		return int(v)
	}
	for _, r := range arcs {
		if r.both {
			err = g.AddUndirected(at(r.from), at(r.to), r.c)
		} else {
			err = g.AddEdge(at(r.from), at(r.to), r.c)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("tdap: solve: %w", err)
		}
	}
	arcs = nil
	var flow int64
	switch alg {
	case dinicAlg:
		flow, err = g.MaxFlowDinic(int(s), int(t))
	case pushRelabelAlg:
		flow, err = g.maxFlow(int(s), int(t), 0)
	default:
		flow, err = g.MaxFlow(int(s), int(t))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("tdap: solve: %w", err)
	}
	onSSD, err := g.SinkSet()
	if err != nil {
		return nil, 0, fmt.Errorf("tdap: solve: %w", err)
	}
	for i := range p.Nodes {
		if v := idx[i]; v >= 0 {
			if onSSD[v] {
				a[i] = SSD
			} else {
				a[i] = Host
			}
		}
	}
	cut := constant + flow
	if c := cost(p, a); c != cut {
		// The cut capacity equals the objective by construction; a mismatch
		// is a bug, reported rather than returned as a wrong answer.
		return nil, 0, fmt.Errorf("tdap: solve: internal error: cut value %d but placement costs %d", cut, c)
	}
	return a, cut, nil
}

// outCommArcs adds the OutComm construction (see Solve) and returns the
// number of auxiliary nodes, numbered from m on, with the extended arc list.
func outCommArcs(p Problem, idx []int32, m int32, inf int64, term func(int32, bool, int64), arcs []netArc) (int, []netArc) {
	// Readers of each OutComm node, grouped by a counting sort.
	n := len(p.Nodes)
	var start []int32
	for _, e := range p.Edges {
		if p.Nodes[e.From].OutComm > 0 {
			if start == nil {
				start = make([]int32, n+1)
			}
			start[e.From+1]++
		}
	}
	if start == nil {
		return 0, arcs
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	readers := make([]int32, start[n])
	pos := make([]int32, n)
	copy(pos, start[:n])
	for _, e := range p.Edges {
		if p.Nodes[e.From].OutComm > 0 {
			readers[pos[e.From]] = idx[e.To]
			pos[e.From]++
		}
	}
	aux := int32(0)
	for i, nd := range p.Nodes {
		b := nd.OutComm
		rs := readers[start[i]:start[i+1]]
		if b == 0 || len(rs) == 0 {
			continue
		}
		u := idx[i]
		hostReader, ssdReader, free := false, false, 0
		for _, w := range rs {
			switch w {
			case srcNode:
				hostReader = true
			case sinkNode:
				ssdReader = true
			default:
				free++
			}
		}
		if u >= 0 && free > 0 && !hostReader && !ssdReader && singleReader(rs) {
			// One reader w (perhaps over parallel edges): u→a→w with a→w
			// infinite charges B exactly when u is on the host and w on
			// the SSD, as an arc u→w of capacity B does, and the mirror
			// image likewise; both together are one undirected edge. The
			// cut function on the program's nodes is unchanged, and so is
			// the smallest optimal SSD set, without two auxiliary nodes.
			arcs = append(arcs, netArc{u, rs[0], b, true})
			continue
		}
		// u on the host, read on the SSD.
		if u != sinkNode {
			if ssdReader {
				term(u, false, b)
			} else if free > 0 {
				x := m + aux
				aux++
				arcs = append(arcs, netArc{u, x, b, false})
				for _, w := range rs {
					if w >= 0 {
						arcs = append(arcs, netArc{x, w, inf, false})
					}
				}
			}
		}
		// u on the SSD, read on the host.
		if u != srcNode {
			if hostReader {
				term(u, true, b)
			} else if free > 0 {
				x := m + aux
				aux++
				arcs = append(arcs, netArc{x, u, b, false})
				for _, w := range rs {
					if w >= 0 {
						arcs = append(arcs, netArc{w, x, inf, false})
					}
				}
			}
		}
	}
	return int(aux), arcs
}

// singleReader reports whether every entry of rs is the same node.
func singleReader(rs []int32) bool {
	for _, w := range rs[1:] {
		if w != rs[0] {
			return false
		}
	}
	return true
}
