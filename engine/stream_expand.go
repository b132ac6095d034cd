package engine

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// expandGen produces the leaves of one Expand node depth first: it holds
// the path to the last leaf (both children of every node on it), so the
// next leaf recomputes only the levels below where the two paths part.
// Leaves asked for in increasing order cost one step per tree node.
type expandGen struct {
	w      *worker
	sn     *lower.StreamNode
	query  Limbs
	mono   Limbs // NTT(X^(−2^j)) over the node's limbs, depth-major
	path   []int // branches of the last leaf
	valid  int   // children[0:valid] follow path
	kids   []Limbs
	branch []int
}

func (w *worker) newExpandGen(i int) (*expandGen, error) {
	sn := &w.r.s.sp.Nodes[i]
	q, owned, err := w.eval(sn.Args[0], 0)
	if err != nil {
		return nil, err
	}
	if owned {
		defer w.release(q)
	}
	// The query may sit above the expansion's level: keep the limbs used.
	limbs, per := sn.Limbs, len(q)/2
	query, err := w.alloc(2 * limbs)
	if err != nil {
		return nil, err
	}
	for p := 0; p < 2; p++ {
		for l := 0; l < limbs; l++ {
			copy(query[p*limbs+l], q[p*per+l])
		}
	}
	d := len(sn.Steps)
	g := &expandGen{w: w, sn: sn, query: query, mono: w.r.s.monomials[limbs-1], path: make([]int, d), branch: make([]int, d)}
	for j := 0; j < d; j++ {
		kid, err := w.alloc(4 * limbs)
		if err != nil {
			return nil, err
		}
		g.kids = append(g.kids, kid)
	}
	return g, nil
}

// half returns child b (0 even, 1 odd) of a step's output.
func half(kids Limbs, b int) Limbs {
	n := len(kids) / 2
	return kids[b*n : (b+1)*n]
}

func (g *expandGen) leaf(k int64) (Limbs, error) {
	sn, d := g.sn, len(g.sn.Steps)
	if k < 0 || k >= sn.Count {
		return nil, fmt.Errorf("engine: expansion leaf %d of %d", k, sn.Count)
	}
	for j := range g.branch {
		g.branch[j] = sn.Expand.Branch(sn.Count, k, j)
	}
	// kids[j] is computed from the node at depth j, which depends on the
	// branches above it: reuse kids[0..f] where f is the first depth at
	// which the paths differ.
	start := g.valid
	for j := 0; j < g.valid; j++ {
		if g.branch[j] != g.path[j] {
			start = j + 1
			break
		}
	}
	limbs := sn.Limbs
	for j := start; j < d; j++ {
		parent := g.query
		if j > 0 {
			parent = half(g.kids[j-1], g.branch[j-1])
		}
		mono := g.mono[j*limbs : (j+1)*limbs]
		if err := g.w.runBody(sn.Steps[j], []Limbs{parent, mono}, g.kids[j]); err != nil {
			g.valid = 0
			return nil, fmt.Errorf("engine: expansion step at depth %d: %w", j, err)
		}
	}
	copy(g.path, g.branch)
	g.valid = d
	return half(g.kids[d-1], g.branch[d-1]), nil
}
