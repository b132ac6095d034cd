package tdap

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// pinnedAssignment places every pinned node of p on its device and every
// free node on d, and returns the free nodes too.
func pinnedAssignment(p Problem, d Device) (Assignment, []int) {
	a := make(Assignment, len(p.Nodes))
	var free []int
	for i, nd := range p.Nodes {
		switch nd.Pin {
		case PinHost:
			a[i] = Host
		case PinSSD:
			a[i] = SSD
		default:
			a[i] = d
			free = append(free, i)
		}
	}
	return a, free
}

// bruteForce enumerates every pin-respecting placement and returns the least
// objective and the intersection of the SSD sets of all optimal placements.
func bruteForce(t *testing.T, p Problem) (best int64, ssdMin []bool) {
	t.Helper()
	n := len(p.Nodes)
	a, free := pinnedAssignment(p, Host)
	best = -1
	for mask := 0; mask < 1<<len(free); mask++ {
		for k, v := range free {
			a[v] = Device(mask >> k & 1)
		}
		c, err := Cost(p, a)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case best < 0 || c < best:
			best = c
			ssdMin = make([]bool, n)
			for v := range a {
				ssdMin[v] = a[v] == SSD
			}
		case c == best:
			for v := range a {
				ssdMin[v] = ssdMin[v] && a[v] == SSD
			}
		}
	}
	return best, ssdMin
}

// randomProblem draws a random DAG on minN..maxN nodes (edges go from lower
// to higher index) with a mix of pins, zero costs, heavy edges, parallel
// edges, OutComm on half the problems and costs on either side of
// D(SSD) ≥ D(Host).
func randomProblem(rng *rand.Rand, minN, maxN int) Problem {
	n := minN + rng.Intn(maxN-minN+1)
	scale := []int64{1, 10, 1000, 1 << 40}[rng.Intn(4)]
	density := rng.Float64() * 0.6
	pPin := []float64{0, 0.15, 0.4}[rng.Intn(3)]
	paperOrder := rng.Intn(2) == 0 // enforce D(SSD) ≥ D(Host)?
	pOut := []float64{0, 0, 0.3, 0.8}[rng.Intn(4)]
	cost := func() int64 {
		if rng.Intn(5) == 0 {
			return 0
		}
		return rng.Int63n(scale) + 1
	}
	var p Problem
	for i := 0; i < n; i++ {
		nd := Node{CostHost: cost(), CostSSD: cost()}
		if paperOrder && nd.CostSSD < nd.CostHost {
			nd.CostHost, nd.CostSSD = nd.CostSSD, nd.CostHost
		}
		if rng.Float64() < pPin {
			nd.Pin = Pin(1 + rng.Intn(2))
		}
		if rng.Float64() < pOut {
			nd.OutComm = cost()
		}
		p.Nodes = append(p.Nodes, nd)
	}
	for j := 1; j < n; j++ {
		for i := 0; i < j; i++ {
			if rng.Float64() >= density {
				continue
			}
			c := cost()
			switch rng.Intn(8) {
			case 0:
				c *= 50 // heavy edge
			case 1:
				c = 0
			}
			p.Edges = append(p.Edges, Edge{From: i, To: j, Comm: c})
			if rng.Intn(10) == 0 {
				p.Edges = append(p.Edges, Edge{From: i, To: j, Comm: cost()})
			}
		}
	}
	return p
}

func TestSolveBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const cases = 600
	sizes, full := 0, 0
	for tc := 0; tc < cases; tc++ {
		minN, maxN := 1, 10
		if tc%3 == 0 {
			minN, maxN = 13, 16 // a third of the cases at the full size
		}
		p := randomProblem(rng, minN, maxN)
		if len(p.Nodes) == 16 {
			full++
		}
		sizes += len(p.Nodes)
		a, c, err := Solve(p)
		if err != nil {
			t.Fatalf("case %d: %v", tc, err)
		}
		if err := p.Check(a); err != nil {
			t.Fatalf("case %d: %v", tc, err)
		}
		direct, err := Cost(p, a)
		if err != nil {
			t.Fatal(err)
		}
		best, ssdMin := bruteForce(t, p)
		if c != best || direct != best {
			t.Fatalf("case %d (%d nodes, %d edges): Solve cost %d, Cost(assignment) %d, brute-force optimum %d",
				tc, len(p.Nodes), len(p.Edges), c, direct, best)
		}
		ad, cd, err := solve(p, dinicAlg)
		if err != nil || cd != best {
			t.Fatalf("case %d: Dinic cost %d (%v), brute-force optimum %d", tc, cd, err, best)
		}
		for v := range a {
			if ad[v] != a[v] {
				t.Fatalf("case %d: node %d: Dinic placement differs", tc, v)
			}
		}
		for v := range a {
			if (a[v] == SSD) != ssdMin[v] {
				t.Fatalf("case %d: node %d on %v; the smallest optimal SSD set disagrees (ties must go to the host)", tc, v, a[v])
			}
		}
	}
	t.Logf("%d cases, %d nodes in total, %d with 16 nodes", cases, sizes, full)
}

// TestSolvePIR is a hand-worked PIR-like program, in microseconds:
//
//	0 query (client input, host)   1 database (stored, SSD, 1 GB)
//	       \ 125                  / 125000  (1 GB over an 8 GB/s link)
//	        2 scan  host 1000, SSD 4000
//	            | 125
//	        3 sum   host 10,   SSD 40
//	            | 125
//	        4 output (host)
//
// Scan on the host pays 1000 + 125000 to pull the database; on the SSD it
// pays 4000 + 125 (query in) + 125 (result out), so it goes to the SSD. The
// sum then costs 10 + 0 on the host (its input already crossed) against
// 40 + 125 on the SSD, so it stays on the host: total 4000+125+125+10 = 4260.
func TestSolvePIR(t *testing.T) {
	p := Problem{
		Nodes: []Node{
			{CostHost: 0, CostSSD: 0, Pin: PinHost},
			{CostHost: 0, CostSSD: 0, Pin: PinSSD},
			{CostHost: 1000, CostSSD: 4000},
			{CostHost: 10, CostSSD: 40},
			{CostHost: 0, CostSSD: 0, Pin: PinHost},
		},
		Edges: []Edge{{0, 2, 125}, {1, 2, 125000}, {2, 3, 125}, {3, 4, 125}},
	}
	a, c, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Assignment{Host, SSD, SSD, Host, Host}
	for i := range want {
		if a[i] != want[i] {
			t.Fatalf("assignment %v, want %v", a, want)
		}
	}
	if c != 4260 {
		t.Fatalf("cost %d, want 4260", c)
	}
	allHost := Assignment{Host, SSD, Host, Host, Host}
	if h, _ := Cost(p, allHost); h != 126010 {
		t.Fatalf("host-only cost %d, want 126010", h)
	}
	ts, err := Transfers(p, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0] != (Transfer{Edge: 0, From: 0, To: 2, FromDev: Host, ToDev: SSD, Comm: 125}) ||
		ts[1] != (Transfer{Edge: 2, From: 2, To: 3, FromDev: SSD, ToDev: Host, Comm: 125}) {
		t.Fatalf("transfers %+v", ts)
	}
	order, err := SegmentOrder(p, a)
	if err != nil {
		t.Fatal(err)
	}
	segs, err := Segments(order, a)
	if err != nil {
		t.Fatal(err)
	}
	// Best order: {0} host, {1, 2} SSD, {3, 4} host.
	want3 := []Segment{{Host, []int{0}}, {SSD, []int{1, 2}}, {Host, []int{3, 4}}}
	if !reflect.DeepEqual(segs, want3) {
		t.Fatalf("segments %+v (order %v), want %+v", segs, order, want3)
	}
	r, err := Partition(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cost != 4260 || !reflect.DeepEqual(r.Segments, want3) || !reflect.DeepEqual(r.Transfers, ts) ||
		!reflect.DeepEqual(r.Assignment, want) || !reflect.DeepEqual(r.Order, order) {
		t.Fatalf("Partition = %+v", r)
	}
	// A cycle is fine for the cut but not for segmentation.
	p.Edges = append(p.Edges, Edge{3, 2, 1})
	if _, err := Partition(p); err == nil {
		t.Fatal("Partition accepted a cyclic program")
	}
	if _, err := Partition(Problem{Nodes: []Node{{CostHost: -1}}}); err == nil {
		t.Fatal("Partition accepted an invalid problem")
	}
}

func TestSolvePinsAndEdgeCases(t *testing.T) {
	// Empty problem.
	if a, c, err := Solve(Problem{}); err != nil || len(a) != 0 || c != 0 {
		t.Fatalf("empty: %v %d %v", a, c, err)
	}
	// All pinned: the cost is constant.
	p := Problem{
		Nodes: []Node{{CostHost: 3, CostSSD: 100, Pin: PinHost}, {CostHost: 100, CostSSD: 7, Pin: PinSSD}},
		Edges: []Edge{{0, 1, 11}, {1, 0, 13}},
	}
	if a, c, err := Solve(p); err != nil || c != 3+7+11+13 || a[0] != Host || a[1] != SSD {
		t.Fatalf("all pinned: %v %d %v", a, c, err)
	}
	// A pin overrides a much cheaper device.
	p = Problem{Nodes: []Node{{CostHost: 1 << 50, CostSSD: 0, Pin: PinHost}}}
	if a, c, err := Solve(p); err != nil || c != 1<<50 || a[0] != Host {
		t.Fatalf("pinned dear host: %v %d %v", a, c, err)
	}
	// D(SSD) < D(Host) is allowed: a lone free node goes to the cheaper SSD.
	p = Problem{Nodes: []Node{{CostHost: 9, CostSSD: 2}}}
	if a, c, err := Solve(p); err != nil || c != 2 || a[0] != SSD {
		t.Fatalf("cheaper SSD: %v %d %v", a, c, err)
	}
	// The largest accepted total (2^61 - 1), OutComm included.
	const half = 1 << 59
	p = Problem{
		Nodes: []Node{{CostHost: half, CostSSD: 1, OutComm: half}, {CostHost: 0, CostSSD: 0, Pin: PinHost},
			{CostHost: half - 1, CostSSD: half - 1}},
		Edges: []Edge{{1, 0, half}, {0, 2, 0}},
	}
	// Node 0 on the SSD would pay 1 + half (input edge) + half (output read
	// across, unless node 2 follows it); on the host it pays half.
	if a, c, err := Solve(p); err != nil || c != 2*half-1 || a[0] != Host || a[2] != Host {
		t.Fatalf("near-overflow: %v %d %v", a, c, err)
	}
	p.Nodes[2].CostSSD = half
	if _, _, err := Solve(p); err == nil || !strings.Contains(err.Error(), "2^61") {
		t.Fatalf("total 2^61 accepted: %v", err)
	}
}

func TestValidateErrors(t *testing.T) {
	ok := []Node{{CostHost: 1, CostSSD: 2}, {CostHost: 1, CostSSD: 2}}
	cases := []struct {
		name string
		p    Problem
		want string
	}{
		{"negative host cost", Problem{Nodes: []Node{{CostHost: -1}}}, "node 0: negative cost"},
		{"negative ssd cost", Problem{Nodes: []Node{{}, {CostSSD: -5}}}, "node 1: negative cost"},
		{"unknown pin", Problem{Nodes: []Node{{Pin: 7}}}, "unknown pin"},
		{"edge out of range", Problem{Nodes: ok, Edges: []Edge{{0, 2, 1}}}, "edge 0: 0→2 out of range"},
		{"negative endpoint", Problem{Nodes: ok, Edges: []Edge{{0, 1, 1}, {-1, 1, 1}}}, "edge 1: -1→1 out of range"},
		{"self-loop", Problem{Nodes: ok, Edges: []Edge{{1, 1, 1}}}, "self-loop on node 1"},
		{"negative comm", Problem{Nodes: ok, Edges: []Edge{{0, 1, -3}}}, "negative transfer cost"},
		{"negative out comm", Problem{Nodes: []Node{{}, {OutComm: -1}}}, "node 1: negative output transfer cost"},
		{"overflow", Problem{Nodes: []Node{{CostHost: math.MaxInt64}, {CostSSD: 1}}}, "2^61"},
		{"edge overflow", Problem{Nodes: ok, Edges: []Edge{{0, 1, math.MaxInt64 - 3}}}, "2^61"},
		{"out comm overflow", Problem{Nodes: []Node{{OutComm: 1 << 60}, {OutComm: 1 << 60}}}, "2^61"},
	}
	for _, c := range cases {
		_, _, err := Solve(c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Solve error %v, want one containing %q", c.name, err, c.want)
		}
		if _, err := Cost(c.p, make(Assignment, len(c.p.Nodes))); err == nil {
			t.Errorf("%s: Cost accepted an invalid problem", c.name)
		}
	}
	p := Problem{Nodes: []Node{{Pin: PinSSD}, {}}}
	for _, a := range []Assignment{{SSD}, {Host, Host}, {SSD, 2}} {
		if _, err := Cost(p, a); err == nil {
			t.Errorf("Cost accepted assignment %v", a)
		}
	}
}

// TestSolveLargeLocallyOptimal checks a 20 000-node layered program, too big
// for brute force: the returned cost is the objective of the placement, no
// single free node can move to lower it, and it is no worse than the
// all-host and all-SSD placements.
func TestSolveLargeLocallyOptimal(t *testing.T) {
	p := layered(rand.New(rand.NewSource(5)), 20000, 200, 0.05)
	a, c, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Cost(p, a); err != nil || d != c {
		t.Fatalf("Cost = %d, %v; Solve said %d", d, err, c)
	}
	nbr := make([][]int, len(p.Nodes))
	for k, e := range p.Edges {
		nbr[e.From] = append(nbr[e.From], k)
		nbr[e.To] = append(nbr[e.To], k)
	}
	for v, nd := range p.Nodes {
		if nd.Pin != Free {
			continue
		}
		// Change in cost if v flips device.
		var delta int64
		if a[v] == Host {
			delta = nd.CostSSD - nd.CostHost
		} else {
			delta = nd.CostHost - nd.CostSSD
		}
		for _, k := range nbr[v] {
			e := p.Edges[k]
			o := e.From + e.To - v
			if a[o] == a[v] {
				delta += e.Comm
			} else {
				delta -= e.Comm
			}
		}
		if delta < 0 {
			t.Fatalf("moving node %d lowers the cost by %d", v, -delta)
		}
	}
	for _, d := range []Device{Host, SSD} {
		b, _ := pinnedAssignment(p, d)
		if u, _ := Cost(p, b); u < c {
			t.Fatalf("all-%v placement costs %d < %d", d, u, c)
		}
	}
	host, ssd := a.Count()
	t.Logf("cost %d, %d host nodes, %d ssd nodes", c, host, ssd)
}

// TestAlgorithmsAgree solves mid-size programs, far beyond brute force, with
// every max-flow algorithm (the deep ones switch from Dinic's phases to
// push-relabel midway): the costs must be equal and, since both return
// the placement with the smallest SSD set, so must the placements. These
// sizes exercise push-relabel's global relabelling and gap heuristic.
func TestAlgorithmsAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	problems := []Problem{
		layered(rng, 30000, 300, 0.05),
		layered(rng, 30000, 300, 0.15),
		layered(rng, 30000, 100, 0.3),
		deep(rng, 10, 3000),
		deep(rng, 3, 5000),
	}
	for i := 0; i < 20; i++ {
		problems = append(problems, randomProblem(rng, 100, 400))
	}
	for k, p := range problems {
		a1, c1, err := solve(p, pushRelabelAlg)
		if err != nil {
			t.Fatal(err)
		}
		a2, c2, err := solve(p, dinicAlg)
		if err != nil {
			t.Fatal(err)
		}
		a3, c3, err := solve(p, hybridAlg)
		if err != nil {
			t.Fatal(err)
		}
		if c1 != c2 || c1 != c3 {
			t.Fatalf("problem %d: push-relabel cost %d, Dinic %d, Dinic then push-relabel %d", k, c1, c2, c3)
		}
		for v := range a1 {
			if a1[v] != a2[v] || a1[v] != a3[v] {
				t.Fatalf("problem %d: node %d placed on %v by push-relabel, %v by Dinic, %v by both", k, v, a1[v], a2[v], a3[v])
			}
		}
	}
}

// TestSolveFanOut is a PIR-like scan over 8 database chunks, in µs: the
// client query (125 to ship) is read by all 8 scans; each scan reads its
// 2000-µs chunk from the SSD; the scans feed one sum, which feeds the output.
// Scans and the sum cost 10 on the host, 40 on the SSD; every other transfer
// costs 125. With the query's transfer as OutComm it is paid once: all scans
// and the sum go to the SSD for 8·40 + 40 + 125 (query) + 125 (result) =
// 610. Charged per edge instead, the same placement costs 8·125 for the
// query, 1485 in all.
func TestSolveFanOut(t *testing.T) {
	const chunks = 8
	build := func(outComm bool) Problem {
		var p Problem
		q := Node{Pin: PinHost}
		if outComm {
			q.OutComm = 125
		}
		p.Nodes = append(p.Nodes, q)
		for k := 0; k < chunks; k++ {
			p.Nodes = append(p.Nodes, Node{Pin: PinSSD})
		}
		for k := 0; k < chunks; k++ {
			p.Nodes = append(p.Nodes, Node{CostHost: 10, CostSSD: 40})
		}
		p.Nodes = append(p.Nodes, Node{CostHost: 10, CostSSD: 40}, Node{Pin: PinHost})
		sum, out := 1+2*chunks, 2+2*chunks
		for k := 0; k < chunks; k++ {
			scan := 1 + chunks + k
			qc := int64(125)
			if outComm {
				qc = 0
			}
			p.Edges = append(p.Edges, Edge{0, scan, qc}, Edge{1 + k, scan, 2000}, Edge{scan, sum, 125})
		}
		p.Edges = append(p.Edges, Edge{sum, out, 125})
		return p
	}
	for _, c := range []struct {
		outComm bool
		want    int64
	}{{true, 610}, {false, 1485}} {
		p := build(c.outComm)
		a, cost, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		if cost != c.want {
			t.Fatalf("OutComm=%v: cost %d, want %d", c.outComm, cost, c.want)
		}
		for i := 1; i < len(p.Nodes)-1; i++ {
			if a[i] != SSD {
				t.Fatalf("OutComm=%v: node %d on %v, want all but the query and output on the SSD: %v", c.outComm, i, a[i], a)
			}
		}
		ts, err := Transfers(p, a)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		ships := 0
		for _, tr := range ts {
			sum += tr.Comm
			if tr.Edge == -1 {
				ships++
				if tr.From != 0 || tr.FromDev != Host || tr.ToDev != SSD {
					t.Fatalf("shipment %+v", tr)
				}
			}
		}
		wantSum, wantShips := int64(chunks*125+125), 0
		if c.outComm {
			wantSum, wantShips = 250, 1
		}
		if sum != wantSum || ships != wantShips {
			t.Fatalf("OutComm=%v: transfers %+v sum to %d with %d shipments, want %d and %d", c.outComm, ts, sum, ships, wantSum, wantShips)
		}
	}
}

// TestSolveSingleReadersBruteForce holds Solve to brute force on sparse
// programs where most OutComm nodes have one reader (sometimes over
// parallel edges), the case Solve charges with one edge instead of two
// auxiliary nodes: same optimum, same smallest SSD set, with every
// max-flow algorithm.
func TestSolveSingleReadersBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	single := 0
	for tc := 0; tc < 400; tc++ {
		n := 2 + rng.Intn(13)
		var p Problem
		for i := 0; i < n; i++ {
			h := rng.Int63n(100)
			nd := Node{CostHost: h, CostSSD: h + rng.Int63n(100) - 30, OutComm: rng.Int63n(80)}
			nd.CostSSD = max(nd.CostSSD, 0)
			if rng.Intn(6) == 0 {
				nd.Pin = Pin(1 + rng.Intn(2))
			}
			p.Nodes = append(p.Nodes, nd)
		}
		readers := make([]int, n)
		for j := 1; j < n; j++ {
			for k := rng.Intn(3); k > 0; k-- {
				i := rng.Intn(j)
				p.Edges = append(p.Edges, Edge{From: i, To: j, Comm: rng.Int63n(3) * rng.Int63n(20)})
				readers[i]++
				if rng.Intn(5) == 0 {
					p.Edges = append(p.Edges, Edge{From: i, To: j}) // parallel
					readers[i]++
				}
			}
		}
		for i, r := range readers {
			if r > 0 && p.Nodes[i].OutComm > 0 && p.Nodes[i].Pin == Free {
				single++
			}
		}
		best, ssdMin := bruteForce(t, p)
		for _, alg := range []algorithm{hybridAlg, pushRelabelAlg, dinicAlg} {
			a, c, err := solve(p, alg)
			if err != nil {
				t.Fatalf("case %d: %v", tc, err)
			}
			if c != best {
				t.Fatalf("case %d (algorithm %d): cost %d, brute-force optimum %d", tc, alg, c, best)
			}
			for v := range a {
				if (a[v] == SSD) != ssdMin[v] {
					t.Fatalf("case %d (algorithm %d): node %d on %v; the smallest optimal SSD set disagrees", tc, alg, v, a[v])
				}
			}
		}
	}
	if single < 400 {
		t.Fatalf("only %d free OutComm nodes with readers: the generator misses the case", single)
	}
}
