package engine

import (
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// PolyLimbs flattens polynomials into object limbs in the compiler's
// calling convention: limb i of polynomial p is object limb p·limbs + i.
// The limbs alias the polynomials' memory.
func PolyLimbs(polys []ring.Poly, limbs int) [][]uint64 {
	out := make([][]uint64, 0, len(polys)*limbs)
	for _, p := range polys {
		out = append(out, p.Coeffs[:limbs]...)
	}
	return out
}

// KeyLimbs flattens an evaluation key in the compiler's key layout:
// polynomial 2·digit + component, limbs q_0…q_L then p_0…p_{α−1}.
func KeyLimbs(g *rlwe.GadgetCiphertext) [][]uint64 {
	var out [][]uint64
	for d := range g.Value {
		for comp := 0; comp < 2; comp++ {
			qp := g.Value[d][0][comp]
			out = append(out, qp.Q.Coeffs...)
			out = append(out, qp.P.Coeffs...)
		}
	}
	return out
}

// CopyLimbs copies object limbs back into polynomials (the inverse of
// PolyLimbs); it reports false if the shapes differ.
func CopyLimbs(limbs [][]uint64, polys []ring.Poly, perPoly int) bool {
	if len(limbs) != len(polys)*perPoly {
		return false
	}
	for p := range polys {
		for i := 0; i < perPoly; i++ {
			if len(limbs[p*perPoly+i]) != len(polys[p].Coeffs[i]) {
				return false
			}
			copy(polys[p].Coeffs[i], limbs[p*perPoly+i])
		}
	}
	return true
}

// GaloisElements returns the distinct Galois elements, in increasing order,
// of the rotations and conjugations in p under params: the Galois keys an
// execution of p needs.
func GaloisElements(params rlwe.Parameters, p *ir.Program) []uint64 {
	seen := map[uint64]bool{}
	var els []uint64
	for _, n := range p.Nodes {
		var g uint64
		switch n.Op {
		case ir.OpHRot:
			g = params.GaloisElement(n.Rotation)
		case ir.OpConjugate:
			g = params.GaloisElementOrderTwoOrthogonalSubgroup()
		default:
			continue
		}
		if !seen[g] {
			seen[g] = true
			els = append(els, g)
		}
	}
	slices.Sort(els)
	return els
}
