package tdap

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestSegments(t *testing.T) {
	a := Assignment{Host, Host, SSD, SSD, Host, SSD, SSD}
	segs, err := Segments([]int{0, 1, 2, 3, 4, 5, 6}, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{Host, []int{0, 1}}, {SSD, []int{2, 3}}, {Host, []int{4}}, {SSD, []int{5, 6}}}
	if !reflect.DeepEqual(segs, want) {
		t.Fatalf("segments %+v, want %+v", segs, want)
	}
	// Another order of the same placement coalesces differently.
	segs, err = Segments([]int{0, 1, 4, 2, 3, 5, 6}, a)
	if err != nil {
		t.Fatal(err)
	}
	want = []Segment{{Host, []int{0, 1, 4}}, {SSD, []int{2, 3, 5, 6}}}
	if !reflect.DeepEqual(segs, want) {
		t.Fatalf("segments %+v, want %+v", segs, want)
	}
	idx, err := SegmentIndex(segs, 7)
	if err != nil || !reflect.DeepEqual(idx, []int{0, 0, 1, 1, 0, 1, 1}) {
		t.Fatalf("SegmentIndex = %v, %v", idx, err)
	}
	// Appending to a segment must not overwrite the next one.
	segs[0].Nodes = append(segs[0].Nodes, 99)
	if segs[1].Nodes[0] != 2 {
		t.Fatal("segments share spare capacity")
	}
	if segs, err := Segments(nil, nil); err != nil || len(segs) != 0 {
		t.Fatalf("empty: %v %v", segs, err)
	}

	for _, c := range []struct {
		order []int
		a     Assignment
		want  string
	}{
		{[]int{0, 1}, Assignment{Host}, "2 entries for 1 nodes"},
		{[]int{0, 0}, Assignment{Host, SSD}, "node 0 appears twice"},
		{[]int{0, 2}, Assignment{Host, SSD}, "order[1] = 2 out of range"},
		{[]int{0, 1}, Assignment{Host, 5}, "unknown device"},
	} {
		if _, err := Segments(c.order, c.a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Segments(%v, %v) error %v, want %q", c.order, c.a, err, c.want)
		}
	}
	for _, c := range []struct {
		segs []Segment
		want string
	}{
		{[]Segment{{Host, []int{0, 1}}}, "node 2 is in no segment"},
		{[]Segment{{Host, []int{0, 1}}, {SSD, []int{1, 2}}}, "node 1 is in segments 0 and 1"},
		{[]Segment{{Host, []int{0, 1, 3}}}, "node 3 out of range"},
	} {
		if _, err := SegmentIndex(c.segs, 3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SegmentIndex(%v) error %v, want %q", c.segs, err, c.want)
		}
	}
}

// allTopoOrders calls f with every topological order of p (small p only).
func allTopoOrders(p Problem, f func([]int)) {
	n := len(p.Nodes)
	indeg := make([]int, n)
	for _, e := range p.Edges {
		indeg[e.To]++
	}
	used := make([]bool, n)
	order := make([]int, 0, n)
	var rec func()
	rec = func() {
		if len(order) == n {
			f(order)
			return
		}
		for v := 0; v < n; v++ {
			if used[v] || indeg[v] != 0 {
				continue
			}
			used[v] = true
			order = append(order, v)
			for _, e := range p.Edges {
				if e.From == v {
					indeg[e.To]--
				}
			}
			rec()
			for _, e := range p.Edges {
				if e.From == v {
					indeg[e.To]++
				}
			}
			order = order[:len(order)-1]
			used[v] = false
		}
	}
	rec()
}

// TestSegmentOrderOptimal compares SegmentOrder with the fewest segments
// over every topological order of small random DAGs under random placements
// (and under the optimal placement from Solve).
func TestSegmentOrderOptimal(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for tc := 0; tc < 300; tc++ {
		p := randomProblem(rng, 1, 8)
		a := make(Assignment, len(p.Nodes))
		if tc%2 == 0 {
			for i := range a {
				a[i] = Device(rng.Intn(2))
			}
			for i := range p.Nodes {
				p.Nodes[i].Pin = Pin(1 + a[i]) // keep the placement valid
			}
		} else {
			var err error
			if a, _, err = Solve(p); err != nil {
				t.Fatal(err)
			}
		}
		best := len(p.Nodes) + 1
		allTopoOrders(p, func(o []int) {
			if s := switches(o, a) + 1; s < best {
				best = s
			}
		})
		order, err := SegmentOrder(p, a)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckOrder(p, order); err != nil {
			t.Fatalf("case %d: SegmentOrder returned a bad order: %v", tc, err)
		}
		segs, err := Segments(order, a)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) != best {
			t.Fatalf("case %d: %d segments, best topological order gives %d", tc, len(segs), best)
		}
		// Every transfer goes forward, from an earlier segment to a later one.
		idx, err := SegmentIndex(segs, len(p.Nodes))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := Transfers(p, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			if tr.To >= 0 && idx[tr.From] >= idx[tr.To] {
				t.Fatalf("case %d: transfer %+v goes from segment %d to %d", tc, tr, idx[tr.From], idx[tr.To])
			}
		}
	}
}

func TestTransfersSumToCutCost(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for tc := 0; tc < 200; tc++ {
		p := randomProblem(rng, 1, 16)
		a, c, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := Transfers(p, a)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		cut := 0
		shipped := make([]bool, len(p.Nodes))
		for _, e := range p.Edges {
			if a[e.From] != a[e.To] {
				cut++
				if p.Nodes[e.From].OutComm > 0 && !shipped[e.From] {
					shipped[e.From] = true
					cut++
				}
			}
		}
		for _, tr := range ts {
			if tr.Edge == -1 {
				if tr.To != -1 || !shipped[tr.From] || tr.Comm != p.Nodes[tr.From].OutComm ||
					tr.FromDev != a[tr.From] || tr.ToDev == tr.FromDev {
					t.Fatalf("case %d: bad OutComm transfer %+v", tc, tr)
				}
				shipped[tr.From] = false // each at most once
				sum += tr.Comm
				continue
			}
			e := p.Edges[tr.Edge]
			if tr.From != e.From || tr.To != e.To || tr.Comm != e.Comm || tr.FromDev != a[e.From] || tr.ToDev != a[e.To] || tr.FromDev == tr.ToDev {
				t.Fatalf("case %d: transfer %+v does not match edge %+v", tc, tr, e)
			}
			sum += tr.Comm
		}
		for i, nd := range p.Nodes {
			if a[i] == SSD {
				sum += nd.CostSSD
			} else {
				sum += nd.CostHost
			}
		}
		if len(ts) != cut || sum != c {
			t.Fatalf("case %d: %d transfers (want %d), node+transfer cost %d (want %d)", tc, len(ts), cut, sum, c)
		}
	}
}

func TestTopoOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for tc := 0; tc < 100; tc++ {
		p := randomProblem(rng, 1, 30)
		// Relabel nodes so that index order is not topological.
		perm := rng.Perm(len(p.Nodes))
		for k := range p.Edges {
			p.Edges[k].From, p.Edges[k].To = perm[p.Edges[k].From], perm[p.Edges[k].To]
		}
		order, err := TopoOrder(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckOrder(p, order); err != nil {
			t.Fatalf("case %d: %v", tc, err)
		}
	}
	cyc := Problem{Nodes: make([]Node, 4), Edges: []Edge{{0, 1, 1}, {1, 2, 1}, {2, 1, 1}, {2, 3, 1}}}
	if _, err := TopoOrder(cyc); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cycle not reported: %v", err)
	}
	if _, err := SegmentOrder(cyc, make(Assignment, 4)); err == nil {
		t.Fatal("SegmentOrder accepted a cycle")
	}
	// The min-cut itself does not need a DAG.
	if _, _, err := Solve(cyc); err != nil {
		t.Fatalf("Solve on a cyclic graph: %v", err)
	}
	p := Problem{Nodes: make([]Node, 3), Edges: []Edge{{0, 1, 1}, {1, 2, 1}}}
	for _, c := range []struct {
		order []int
		want  string
	}{
		{[]int{0, 2, 1}, "edge 1 (1→2) goes backwards"},
		{[]int{0, 1}, "2 entries for 3 nodes"},
		{[]int{0, 1, 1}, "node 1 appears twice"},
		{[]int{0, 1, 3}, "order[2] = 3 out of range"},
	} {
		if err := CheckOrder(p, c.order); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckOrder(%v) error %v, want %q", c.order, err, c.want)
		}
	}
	if err := CheckOrder(p, []int{0, 1, 2}); err != nil {
		t.Error(err)
	}
	if _, err := SegmentOrder(p, Assignment{Host}); err == nil {
		t.Error("SegmentOrder accepted a short assignment")
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Host.String(), "host"}, {SSD.String(), "ssd"}, {Device(9).String(), "Device(9)"},
		{Free.String(), "free"}, {PinHost.String(), "host"}, {PinSSD.String(), "ssd"}, {Pin(7).String(), "Pin(7)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	h, s := Assignment{Host, SSD, SSD}.Count()
	if h != 1 || s != 2 {
		t.Errorf("Count = %d, %d", h, s)
	}
}
