package pir

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Monomials returns NTT(X^{−2^j}) = NTT(−X^{N−2^j}) modulo q_0 … q_level
// for j = 0 … depths−1 (depths is capped at log2 N), in the standard
// representation (not Montgomery: apply ring.MForm before using them with
// Lattigo's MulCoeffsMontgomery). Multiplying an NTT-domain polynomial
// coefficient-wise by entry j multiplies it exactly by X^{−2^j}; the odd
// branch of the expansion at depth j does this. It returns nil for a level
// outside [0, params.MaxLevel()] or depths < 1.
func Monomials(params bgv.Parameters, level int, depths int) []ring.Poly {
	if params.N() == 0 || level < 0 || level > params.MaxLevel() || depths < 1 {
		return nil
	}
	depths = min(depths, params.LogN())
	r := params.RingQ().AtLevel(level)
	n := params.N()
	out := make([]ring.Poly, depths)
	for j := range out {
		p := r.NewPoly()
		for i, s := range r.SubRings[:level+1] {
			p.Coeffs[i][n-(1<<j)] = s.Modulus - 1
		}
		r.NTT(p, p)
		out[j] = p
	}
	return out
}

// expander walks the expansion tree of one query depth-first, keeping the
// nodes on the current path (nodes[j] at depth j, nodes[0] the query) and
// each one's automorphism, so every internal node costs one key switch
// however its children are visited. Not safe for concurrent use: each
// worker has its own (with its own evaluator).
type expander struct {
	eval   *bgv.Evaluator
	ringQ  *ring.Ring
	mono   []ring.Poly // Monomials at the query level
	galEls []uint64
	nodes  []*rlwe.Ciphertext // nodes[0] = the query (read only)
	auts   []*rlwe.Ciphertext // auts[j] = Aut_{g_j}(nodes[j]) if autOK[j]
	autOK  []bool
	path   []int // path[j]: branch from nodes[j] to nodes[j+1]
	valid  int   // nodes[1 … valid] follow path[:valid]
	bits   []int // scratch path
}

func newExpander(params bgv.Parameters, eval *bgv.Evaluator, mono []ring.Poly, galEls []uint64, query *rlwe.Ciphertext) *expander {
	level := query.Level()
	d := len(galEls)
	e := &expander{
		eval:   eval,
		ringQ:  params.RingQ().AtLevel(level),
		mono:   mono,
		galEls: galEls,
		nodes:  make([]*rlwe.Ciphertext, d+1),
		auts:   make([]*rlwe.Ciphertext, d),
		autOK:  make([]bool, d),
		path:   make([]int, d),
		bits:   make([]int, 0, d),
	}
	e.nodes[0] = query
	for j := 1; j <= d; j++ {
		e.nodes[j] = bgv.NewCiphertext(params, 1, level)
	}
	for j := range e.auts {
		e.auts[j] = bgv.NewCiphertext(params, 1, level)
	}
	return e
}

// colPath is the branch sequence to column c's leaf: 1, then the log2 Cols
// bits of c from the most significant (the bits of 1 + 2·bitrev(c) from
// bit 0 up).
func (e *expander) colPath(c, logCols int) []int {
	e.bits = append(e.bits[:0], 1)
	for j := logCols - 1; j >= 0; j-- {
		e.bits = append(e.bits, (c>>j)&1)
	}
	return e.bits
}

// rowPath is the branch sequence to row r's leaf: 0, then the log2 Rows
// bits of r from the most significant.
func (e *expander) rowPath(r, logRows int) []int {
	e.bits = append(e.bits[:0], 0)
	for j := logRows - 1; j >= 0; j-- {
		e.bits = append(e.bits, (r>>j)&1)
	}
	return e.bits
}

// leaf returns the node reached from the query by the branches in path
// (recomputing only below the prefix it shares with the previous path).
// The result is owned by the expander and valid until the next call.
func (e *expander) leaf(path []int) (*rlwe.Ciphertext, error) {
	if len(path) > len(e.galEls) {
		return nil, fmt.Errorf("pir: expansion path of depth %d, have %d Galois elements", len(path), len(e.galEls))
	}
	k := 0
	for k < e.valid && k < len(path) && e.path[k] == path[k] {
		k++
	}
	for j := k; j < len(path); j++ {
		if err := e.child(j, path[j]); err != nil {
			return nil, err
		}
		e.path[j] = path[j]
		e.valid = j + 1
	}
	// For a leaf shallower than the last one, the deeper nodes stay valid
	// (they still follow e.path).
	return e.nodes[len(path)], nil
}

// child writes into nodes[j+1] the branch-b child of nodes[j]:
// x + Aut_{g_j}(x) for b = 0, (x − Aut_{g_j}(x))·X^{−2^j} for b = 1.
func (e *expander) child(j, b int) error {
	x, out := e.nodes[j], e.nodes[j+1]
	if !e.autOK[j] {
		if err := e.eval.Automorphism(x, e.galEls[j], e.auts[j]); err != nil {
			return fmt.Errorf("pir: expansion depth %d: %w", j, err)
		}
		e.autOK[j] = true
	}
	a := e.auts[j]
	for i := range out.Value {
		if b == 0 {
			e.ringQ.Add(x.Value[i], a.Value[i], out.Value[i])
		} else {
			e.ringQ.Sub(x.Value[i], a.Value[i], out.Value[i])
			e.ringQ.MulCoeffsBarrett(out.Value[i], e.mono[j], out.Value[i])
		}
	}
	*out.MetaData = *x.MetaData
	// Everything below nodes[j+1] is stale.
	for i := j + 1; i < len(e.autOK); i++ {
		e.autOK[i] = false
	}
	return nil
}
