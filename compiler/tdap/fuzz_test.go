package tdap

import "testing"

// decodeProblem turns fuzz bytes into a small problem: byte 0 gives the node
// count (1–12), then three bytes per node (host cost, SSD cost, and pin in
// the low two bits with OutComm in the other six), then
// three bytes per edge (from, to, transfer cost); bytes that run out end the
// lists. Self-loops are kept, so invalid problems are fuzzed too.
func decodeProblem(data []byte) Problem {
	var p Problem
	if len(data) == 0 {
		return p
	}
	n := int(data[0])%12 + 1
	data = data[1:]
	for i := 0; i < n && len(data) >= 3; i++ {
		p.Nodes = append(p.Nodes, Node{CostHost: int64(data[0]), CostSSD: int64(data[1]) * 3, Pin: Pin(data[2] % 4), OutComm: int64(data[2]/4) * 5})
		data = data[3:]
	}
	if len(p.Nodes) == 0 {
		return p
	}
	for len(data) >= 3 {
		m := len(p.Nodes)
		p.Edges = append(p.Edges, Edge{From: int(data[0]) % m, To: int(data[1]) % m, Comm: int64(data[2]) * 7})
		data = data[3:]
	}
	return p
}

// FuzzSolve checks Solve against brute force on arbitrary small problems,
// and that invalid ones are rejected by both Solve and Cost, never a panic.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{4, 10, 40, 0, 0, 0, 1, 0, 0, 2, 5, 9, 0, 0, 1, 2, 2, 100, 1, 2, 3, 2, 3, 50})
	f.Add([]byte{0, 7, 1, 0})
	f.Add([]byte{2, 1, 1, 0, 1, 1, 0, 0, 0, 9, 1, 0, 9})
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := decodeProblem(data)
		a, c, err := Solve(p)
		if verr := p.Validate(); verr != nil {
			if err == nil {
				t.Fatalf("Solve accepted an invalid problem (%v)", verr)
			}
			if _, cerr := Cost(p, make(Assignment, len(p.Nodes))); cerr == nil {
				t.Fatal("Cost accepted an invalid problem")
			}
			return
		}
		if err != nil {
			t.Fatalf("Solve: %v", err)
		}
		direct, err := Cost(p, a)
		if err != nil {
			t.Fatal(err)
		}
		best, ssdMin := bruteForce(t, p)
		if c != best || direct != best {
			t.Fatalf("Solve %d, Cost %d, brute force %d for %+v", c, direct, best, p)
		}
		for v := range a {
			if (a[v] == SSD) != ssdMin[v] {
				t.Fatalf("node %d: tie not resolved to the host", v)
			}
		}
	})
}
