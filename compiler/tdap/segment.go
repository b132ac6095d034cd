package tdap

import "fmt"

// Segment is a maximal run of consecutive nodes, in a topological order, that
// are placed on the same device. Device segments become mPrograms; host
// segments run on the host accelerator.
type Segment struct {
	Device Device
	Nodes  []int
}

// Transfer is data crossing the host–SSD link: a cut edge, or (Edge and To
// both -1) the one-off shipment of a node's output that has OutComm and is
// read on the other device.
type Transfer struct {
	Edge     int // index in Problem.Edges, or -1 for an OutComm shipment
	From, To int // To is -1 for an OutComm shipment
	FromDev  Device
	ToDev    Device
	Comm     int64
}

// Segments coalesces consecutive same-device nodes of order into segments.
// order must be a permutation of 0..len(a)-1 (normally a topological order:
// see CheckOrder, TopoOrder and SegmentOrder); segments appear in order and
// their Nodes keep it.
func Segments(order []int, a Assignment) ([]Segment, error) {
	if len(order) != len(a) {
		return nil, fmt.Errorf("tdap: segments: order has %d entries for %d nodes", len(order), len(a))
	}
	seen := make([]bool, len(a))
	for k, v := range order {
		if v < 0 || v >= len(a) {
			return nil, fmt.Errorf("tdap: segments: order[%d] = %d out of range [0, %d)", k, v, len(a))
		}
		if seen[v] {
			return nil, fmt.Errorf("tdap: segments: node %d appears twice in the order", v)
		}
		seen[v] = true
		if a[v] != Host && a[v] != SSD {
			return nil, fmt.Errorf("tdap: segments: node %d: unknown device %d", v, uint8(a[v]))
		}
	}
	nodes := make([]int, len(order))
	copy(nodes, order)
	var segs []Segment
	for lo := 0; lo < len(nodes); {
		hi := lo + 1
		for hi < len(nodes) && a[nodes[hi]] == a[nodes[lo]] {
			hi++
		}
		segs = append(segs, Segment{Device: a[nodes[lo]], Nodes: nodes[lo:hi:hi]})
		lo = hi
	}
	return segs, nil
}

// SegmentIndex maps each node 0..n-1 to the index of the segment holding it.
func SegmentIndex(segs []Segment, n int) ([]int, error) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = -1
	}
	for k, s := range segs {
		for _, v := range s.Nodes {
			if v < 0 || v >= n {
				return nil, fmt.Errorf("tdap: segment %d: node %d out of range [0, %d)", k, v, n)
			}
			if idx[v] >= 0 {
				return nil, fmt.Errorf("tdap: node %d is in segments %d and %d", v, idx[v], k)
			}
			idx[v] = k
		}
	}
	for v, k := range idx {
		if k < 0 {
			return nil, fmt.Errorf("tdap: node %d is in no segment", v)
		}
	}
	return idx, nil
}

// Transfers lists the cut edges of placement a, in edge order, followed by
// the OutComm shipments in node order. Their Comm values sum to the transfer
// part of Cost(p, a).
func Transfers(p Problem, a Assignment) ([]Transfer, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := p.Check(a); err != nil {
		return nil, err
	}
	var ts []Transfer
	var across []bool
	for k, e := range p.Edges {
		if a[e.From] != a[e.To] {
			ts = append(ts, Transfer{Edge: k, From: e.From, To: e.To, FromDev: a[e.From], ToDev: a[e.To], Comm: e.Comm})
			if p.Nodes[e.From].OutComm > 0 {
				if across == nil {
					across = make([]bool, len(p.Nodes))
				}
				across[e.From] = true
			}
		}
	}
	for i, x := range across {
		if x {
			ts = append(ts, Transfer{Edge: -1, From: i, To: -1, FromDev: a[i], ToDev: 1 - a[i], Comm: p.Nodes[i].OutComm})
		}
	}
	return ts, nil
}

// CheckOrder reports whether order is a topological order of p: a permutation
// of its nodes in which every edge goes forward.
func CheckOrder(p Problem, order []int) error {
	n := len(p.Nodes)
	if len(order) != n {
		return fmt.Errorf("tdap: order has %d entries for %d nodes", len(order), n)
	}
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	for k, v := range order {
		if v < 0 || v >= n {
			return fmt.Errorf("tdap: order[%d] = %d out of range [0, %d)", k, v, n)
		}
		if pos[v] >= 0 {
			return fmt.Errorf("tdap: node %d appears twice in the order", v)
		}
		pos[v] = k
	}
	for k, e := range p.Edges {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n {
			return fmt.Errorf("tdap: edge %d: %d→%d out of range [0, %d)", k, e.From, e.To, n)
		}
		if pos[e.From] >= pos[e.To] {
			return fmt.Errorf("tdap: edge %d (%d→%d) goes backwards in the order", k, e.From, e.To)
		}
	}
	return nil
}

// TopoOrder returns a topological order of p (Kahn's algorithm, ready nodes
// taken lowest index first among those released together), or an error
// if the graph has a cycle.
func TopoOrder(p Problem) ([]int, error) {
	return kahn(p, nil, Host)
}

// SegmentOrder returns a topological order of p that yields the fewest
// segments under placement a. It is Kahn's algorithm with one ready queue per
// device: it keeps taking nodes of the current device, including the ones
// they release, and switches device only when none is ready. Phase k of this
// greedy schedules every node whose earliest possible segment is k, so it is
// optimal for the starting device; both starting devices are tried.
func SegmentOrder(p Problem, a Assignment) ([]int, error) {
	if len(a) != len(p.Nodes) {
		return nil, fmt.Errorf("tdap: assignment has %d entries for %d nodes", len(a), len(p.Nodes))
	}
	for i, d := range a {
		if d != Host && d != SSD {
			return nil, fmt.Errorf("tdap: node %d: unknown device %d", i, uint8(d))
		}
	}
	h, err := kahn(p, a, Host)
	if err != nil {
		return nil, err
	}
	s, err := kahn(p, a, SSD)
	if err != nil {
		return nil, err
	}
	if switches(s, a) < switches(h, a) {
		return s, nil
	}
	return h, nil
}

func switches(order []int, a Assignment) int {
	c := 0
	for k := 1; k < len(order); k++ {
		if a[order[k]] != a[order[k-1]] {
			c++
		}
	}
	return c
}

// kahn is Kahn's algorithm with FIFO ready queues. With a == nil there is
// one queue; otherwise one per device, drained device by device starting
// with first.
func kahn(p Problem, a Assignment, first Device) ([]int, error) {
	n := len(p.Nodes)
	indeg := make([]int32, n)
	start := make([]int32, n+1)
	for k, e := range p.Edges {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n {
			return nil, fmt.Errorf("tdap: edge %d: %d→%d out of range [0, %d)", k, e.From, e.To, n)
		}
		indeg[e.To]++
		start[e.From+1]++
	}
	for v := 0; v < n; v++ {
		start[v+1] += start[v]
	}
	succ := make([]int32, len(p.Edges))
	pos := make([]int32, n)
	copy(pos, start[:n])
	for _, e := range p.Edges {
		succ[pos[e.From]] = int32(e.To)
		pos[e.From]++
	}
	dev := func(v int) Device {
		if a == nil {
			return Host
		}
		return a[v]
	}
	// Two FIFO queues sharing no storage with the output.
	var q [2][]int
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			q[dev(v)] = append(q[dev(v)], v)
		}
	}
	var head [2]int
	order := make([]int, 0, n)
	cur := first
	for len(order) < n {
		if head[cur] == len(q[cur]) {
			cur ^= 1
			if head[cur] == len(q[cur]) {
				for v := 0; v < n; v++ {
					if indeg[v] > 0 {
						return nil, fmt.Errorf("tdap: the graph has a cycle (node %d is on or after it)", v)
					}
				}
				return nil, fmt.Errorf("tdap: the graph has a cycle")
			}
		}
		v := q[cur][head[cur]]
		head[cur]++
		order = append(order, v)
		for _, w := range succ[start[v]:start[v+1]] {
			if indeg[w]--; indeg[w] == 0 {
				q[dev(int(w))] = append(q[dev(int(w))], int(w))
			}
		}
	}
	return order, nil
}
