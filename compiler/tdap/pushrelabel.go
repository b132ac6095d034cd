package tdap

// Push-relabel (Goldberg–Tarjan) with highest-label selection, the gap
// heuristic and periodic global relabelling, in the style of Cherkassky and
// Goldberg's HIPR. Only the first phase runs: it ends with a maximum preflow,
// whose excess at t is the max-flow value and whose residual graph yields the
// minimum cut (SinkSet). Excess that cannot reach t stays where it is; the
// cut does not need it returned to s.
//
// Labels d are lower bounds on the residual distance to t; d == n means
// "cannot reach t" and such nodes are never touched again. Every node with
// a label below n sits in exactly one bucket list for its label: a stack of
// active nodes (positive excess) or a doubly linked list of inactive ones,
// so that a gap (an empty label) can be detected and the nodes above it
// dropped at once.

// Global relabelling runs when the relabel work since the last one exceeds
// globalAlpha·n + m, scaled by globalFreq (HIPR's defaults).
const (
	globalAlpha = 6
	globalFreq  = 0.5
	relabelCost = 12
)

type pushRelabel struct {
	g      *Network
	n      int32
	excess []int64
	d      []int32
	iter   []int32

	aHead []int32 // per label: first active node (stack through aNext)
	aNext []int32
	iHead []int32 // per label: first inactive node (list through iNext/iPrev)
	iNext []int32
	iPrev []int32

	maxActive int32 // no active node has a higher label
	maxLabel  int32 // no listed node has a higher label
	work      float64
	queue     []int32
}

// dinicWork bounds the work of Dinic's phases MaxFlow runs before it hands
// the flow to push-relabel, in scans of the whole arc array. Compiled
// programs with a hundred bootstrappings in a row (Engorgio's vector
// queries, 120,000–215,000 nodes) finish in 4 phases and about 9 scans,
// several times faster than push-relabel alone, which relabels their wide
// fan-out nodes over and over (0.2 s against 1.4 s on vecsearch-vq1-s).
// Other networks — deep, narrow programs needing hundreds of phases, or
// wide layered ones (BenchmarkSolveDeep160k, BenchmarkSolve1M) — are far
// faster under push-relabel, which then starts from the flow found so far,
// so they pay for this much Dinic at most.
const dinicWork = 12

// MaxFlow computes the value of a maximum s–t flow and returns it: Dinic's
// phases while their work stays within dinicWork scans of the arcs, then,
// if an augmenting path is left, push-relabel from the flow found so far. Only one of MaxFlow and
// MaxFlowDinic may be called, once; afterwards SinkSet describes the minimum
// cut with the smallest sink side (the same cut whichever algorithm
// finished: it is a property of the network, not of the flow).
func (g *Network) MaxFlow(s, t int) (int64, error) {
	return g.maxFlow(s, t, -1)
}

// maxFlow runs Dinic's phases within budget arc scans (-1: dinicWork
// scans of the arc array; 0: none), then push-relabel.
func (g *Network) maxFlow(s, t, budget int) (int64, error) {
	if err := g.prepare(s, t); err != nil {
		return 0, err
	}
	if budget < 0 {
		budget = dinicWork * len(g.arcs)
	}
	flow, done := g.dinic(budget)
	if done {
		g.complete = true
		return flow, nil
	}
	n := int32(g.n)
	pr := &pushRelabel{
		g:      g,
		n:      n,
		excess: make([]int64, n),
		d:      make([]int32, n),
		iter:   make([]int32, n),
		aHead:  make([]int32, n+1),
		aNext:  make([]int32, n),
		iHead:  make([]int32, n+1),
		iNext:  make([]int32, n),
		iPrev:  make([]int32, n),
		queue:  make([]int32, 0, n),
	}
	// The flow so far has arrived at t; every other node is balanced.
	pr.excess[t] = flow
	// Saturate every arc out of s (in the residual graph of that flow).
	for a := g.start[s]; a < g.start[s+1]; a++ {
		e := &g.arcs[a]
		if e.cap > 0 {
			pr.excess[e.head] += e.cap
			g.arcs[e.rev].cap += e.cap
			e.cap = 0
		}
	}
	pr.globalRelabel()
	pr.run()
	return pr.excess[t], nil
}

// globalRelabel sets every label to the exact residual distance to t by a
// backward breadth-first search and rebuilds the buckets.
func (pr *pushRelabel) globalRelabel() {
	g, n := pr.g, pr.n
	for v := range pr.d {
		pr.d[v] = n
	}
	for k := range pr.aHead {
		pr.aHead[k] = -1
		pr.iHead[k] = -1
	}
	pr.maxActive, pr.maxLabel = -1, 0
	pr.d[g.t] = 0
	q := append(pr.queue[:0], g.t)
	for i := 0; i < len(q); i++ {
		v := q[i]
		dv := pr.d[v] + 1
		for _, e := range g.arcs[g.start[v]:g.start[v+1]] {
			u := e.head
			// e is v→u; its pair u→v is usable if it has residual capacity.
			if pr.d[u] == n && u != g.s && g.arcs[e.rev].cap > 0 {
				pr.d[u] = dv
				pr.iter[u] = g.start[u]
				q = append(q, u)
				if pr.excess[u] > 0 {
					pr.pushActive(u)
				} else {
					pr.addInactive(u)
				}
				pr.maxLabel = dv
			}
		}
	}
	pr.queue = q[:0]
	pr.work = 0
}

func (pr *pushRelabel) pushActive(u int32) {
	k := pr.d[u]
	pr.aNext[u] = pr.aHead[k]
	pr.aHead[k] = u
	if k > pr.maxActive {
		pr.maxActive = k
	}
}

func (pr *pushRelabel) addInactive(u int32) {
	k := pr.d[u]
	h := pr.iHead[k]
	pr.iNext[u], pr.iPrev[u] = h, -1
	if h >= 0 {
		pr.iPrev[h] = u
	}
	pr.iHead[k] = u
}

func (pr *pushRelabel) removeInactive(u int32) {
	nx, pv := pr.iNext[u], pr.iPrev[u]
	if pv >= 0 {
		pr.iNext[pv] = nx
	} else {
		pr.iHead[pr.d[u]] = nx
	}
	if nx >= 0 {
		pr.iPrev[nx] = pv
	}
}

func (pr *pushRelabel) run() {
	g := pr.g
	threshold := globalAlpha*float64(g.n) + float64(len(g.arcs)/2)
	for pr.maxActive >= 0 {
		u := pr.aHead[pr.maxActive]
		if u < 0 {
			pr.maxActive--
			continue
		}
		pr.aHead[pr.maxActive] = pr.aNext[u]
		pr.discharge(u)
		if pr.work*globalFreq > threshold {
			pr.globalRelabel()
		}
	}
}

// discharge pushes u's excess to neighbours one label lower, relabelling u
// when it has none, until the excess is gone or u cannot reach t. u is in no
// bucket on entry; on return it is listed as inactive or has label n.
func (pr *pushRelabel) discharge(u int32) {
	g, n := pr.g, pr.n
	arcs, d, excess := g.arcs, pr.d, pr.excess
	end := g.start[u+1]
	for {
		k := d[u]
		ex := excess[u]
		a := pr.iter[u]
		for ; a < end; a++ {
			e := &arcs[a]
			if e.cap == 0 {
				continue
			}
			v := e.head
			if d[v] != k-1 {
				continue
			}
			delta := min(ex, e.cap)
			e.cap -= delta
			arcs[e.rev].cap += delta
			if excess[v] == 0 && v != g.t {
				pr.removeInactive(v)
				pr.pushActive(v)
			}
			excess[v] += delta
			ex -= delta
			if ex == 0 {
				break
			}
		}
		excess[u] = ex
		if ex == 0 {
			pr.iter[u] = a
			pr.addInactive(u)
			return
		}
		// No admissible arc is left: relabel, unless u was alone at its
		// label, in which case nothing at or above it can reach t (gap).
		if pr.aHead[k] < 0 && pr.iHead[k] < 0 {
			for j := k + 1; j <= pr.maxLabel; j++ {
				for w := pr.iHead[j]; w >= 0; w = pr.iNext[w] {
					d[w] = n
				}
				pr.iHead[j] = -1
			}
			d[u] = n
			pr.maxLabel = k - 1
			return
		}
		start := g.start[u]
		pr.work += float64(relabelCost + end - start)
		best, bestArc := n, start
		for b := start; b < end; b++ {
			e := &arcs[b]
			if e.cap > 0 && d[e.head]+1 < best {
				best, bestArc = d[e.head]+1, b
			}
		}
		if best >= n {
			d[u] = n
			return
		}
		d[u] = best
		pr.iter[u] = bestArc
		pr.maxActive = best
		if best > pr.maxLabel {
			pr.maxLabel = best
		}
	}
}
