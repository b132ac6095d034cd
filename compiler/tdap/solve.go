package tdap

import "fmt"

// Solve finds a placement minimising the TDAP objective
//
//	Σ_i D_i(x_i) + Σ_{(i,j) cut} T_comm(i,j)
//
// over all placements that respect the pins, and returns it with its cost.
//
// It is Stone's two-processor construction: a flow network with the host as
// source s and the SSD as sink t. A node left on the sink side is separated
// from s, so the arc s→v carries D_v(SSD); a node on the source side is
// separated from t, so v→t carries D_v(Host); each dependency is an
// undirected edge of capacity T_comm. Every s–t cut is then a placement and
// its capacity is that placement's objective, so a minimum cut is an optimal
// placement. The cut is computed by Network.MaxFlow (push-relabel).
//
// Pins are not modelled as infinite capacities: a pinned node is merged into
// its terminal, its own cost becomes a constant, and its edges to free nodes
// become terminal arcs (an edge to a host-pinned node is paid exactly when the
// free end goes to the SSD). Edges between two pinned nodes are constants.
// For each free node the common part min(s→v, v→t) is also a constant, so at
// most one terminal arc per node remains. This keeps every capacity finite and
// the network smaller.
//
// The construction needs only non-negative costs; the paper's assumption
// D_i(SSD) ≥ D_i(Host) is not required. Among optimal placements Solve
// returns the one whose set of SSD nodes is smallest (it is contained in the
// SSD set of every optimal placement), so ties go to the host.
func Solve(p Problem) (Assignment, int64, error) {
	return solve(p, pushRelabelAlg)
}

// algorithm selects the max-flow algorithm behind Solve (tests and
// benchmarks compare them).
type algorithm int

const (
	pushRelabelAlg algorithm = iota
	dinicAlg
)

func solve(p Problem, alg algorithm) (Assignment, int64, error) {
	if err := p.Validate(); err != nil {
		return nil, 0, err
	}
	n := len(p.Nodes)
	a := make(Assignment, n)
	// idx[i] is node i's index in the flow network, or -1 when pinned.
	idx := make([]int32, n)
	var constant int64
	m := 0
	for i, nd := range p.Nodes {
		switch nd.Pin {
		case PinHost:
			a[i], idx[i] = Host, -1
			constant += nd.CostHost
		case PinSSD:
			a[i], idx[i] = SSD, -1
			constant += nd.CostSSD
		default:
			idx[i] = int32(m)
			m++
		}
	}
	if m == 0 {
		for _, e := range p.Edges {
			if a[e.From] != a[e.To] {
				constant += e.Comm
			}
		}
		return a, constant, nil
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
	inner := 0
	for _, e := range p.Edges {
		u, v := idx[e.From], idx[e.To]
		switch {
		case u < 0 && v < 0:
			if a[e.From] != a[e.To] {
				constant += e.Comm
			}
		case u < 0:
			pinned(toSSD, toHost, v, a[e.From], e.Comm)
		case v < 0:
			pinned(toSSD, toHost, u, a[e.To], e.Comm)
		case e.Comm > 0:
			inner++
		}
	}
	s, t := m, m+1
	g, err := NewNetwork(m+2, inner+m)
	if err != nil {
		return nil, 0, fmt.Errorf("tdap: solve: %w", err)
	}
	for v := 0; v < m; v++ {
		c := min(toSSD[v], toHost[v])
		constant += c
		if r := toSSD[v] - c; r > 0 {
			err = g.AddEdge(s, v, r)
		} else if r := toHost[v] - c; r > 0 {
			err = g.AddEdge(v, t, r)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("tdap: solve: %w", err)
		}
	}
	for _, e := range p.Edges {
		u, v := idx[e.From], idx[e.To]
		if u >= 0 && v >= 0 && e.Comm > 0 {
			if err := g.AddUndirected(int(u), int(v), e.Comm); err != nil {
				return nil, 0, fmt.Errorf("tdap: solve: %w", err)
			}
		}
	}
	var flow int64
	if alg == dinicAlg {
		flow, err = g.MaxFlowDinic(s, t)
	} else {
		flow, err = g.MaxFlow(s, t)
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
	total := constant + flow
	if c := cost(p, a); c != total {
		// The cut capacity equals the objective by construction; a mismatch
		// is a bug, reported rather than returned as a wrong answer.
		return nil, 0, fmt.Errorf("tdap: solve: internal error: cut value %d but placement costs %d", total, c)
	}
	return a, total, nil
}

// pinned folds an edge between free node v and a node pinned to device d
// into v's terminal costs.
func pinned(toSSD, toHost []int64, v int32, d Device, comm int64) {
	if d == Host {
		toSSD[v] += comm
	} else {
		toHost[v] += comm
	}
}
