package compiler

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// psPoly is the shape of one polynomial in Lattigo's Paterson–Stockmeyer
// recursion (circuits/common/polynomial/polynomial.go, Polynomial):
// degree = len(Coeffs)−1, MaxDeg, Lead, and the level its baby step is
// evaluated at.
type psPoly struct {
	degree, maxDeg int
	lead           bool
	level          int
}

// polyEval is one run of polynomial.Evaluator.Evaluate
// (circuits/common/polynomial/polynomial_evaluator.go) on a polynomial
// that is either even or odd (the EvalMod polynomials are).
type polyEval struct {
	e          *bootEmitter
	chebyshev  bool
	even, odd  bool
	pow        map[int]int // power basis: k → node of T_k(x) (or x^k)
	iterations int
	poly       int // lower.BootConst.Poly of the constants emitted
}

// polynomial emits the evaluation of a degree-`degree` polynomial in x
// (Chebyshev basis, or monomial), even (odd = false) or odd; its constants
// are named with lower.BootConst.Poly = poly.
func (e *bootEmitter) polynomial(x, degree int, chebyshev, odd bool, poly int) (int, error) {
	pe := &polyEval{e: e, chebyshev: chebyshev, even: !odd, odd: odd, pow: map[int]int{1: x}, poly: poly}
	logDegree := bits.Len(uint(degree))
	logSplit := optimalSplit(logDegree)
	// Evaluate: the largest power of two below the degree, then the
	// baby-step powers of the right parity.
	if err := pe.genPower(1 << (logDegree - 1)); err != nil {
		return 0, err
	}
	for i := 1<<logSplit - 1; i > 2; i-- {
		if (i&1 == 0 && pe.even) || (i&1 == 1 && pe.odd) {
			if err := pe.genPower(i); err != nil {
				return 0, err
			}
		}
	}
	// PatersonStockmeyerPolynomial: the split and the level of each baby
	// step (ckks/polynomial simEvaluator: one level per rescale).
	target := e.level(x) - (logDegree - 1)
	var ps []psPoly
	if err := pe.recursePS(logSplit, target, psPoly{degree: degree, maxDeg: degree, lead: true}, &ps); err != nil {
		return 0, err
	}
	// EvaluatePatersonStockmeyerPolynomialVector.
	type step struct{ degree, ct int }
	steps := make([]*step, len(ps))
	for i := range ps {
		ct, err := pe.babyStep(ps[i], i)
		if err != nil {
			return 0, err
		}
		steps[len(ps)-1-i] = &step{degree: ps[i].degree, ct: ct}
	}
	for rounds := 0; len(steps) != 1; rounds++ {
		if rounds > 64 {
			return 0, fmt.Errorf("giant steps do not converge")
		}
		giant := make([]int, len(steps))
		for i := 0; i < len(steps); i++ {
			if i == len(steps)-1 {
				giant[i] = 2
			} else if steps[i].degree == steps[i+1].degree {
				giant[i] = 1
				i++
			}
		}
		for i := 0; i < len(steps); i++ {
			switch giant[i] {
			case 2:
				steps[i].degree = steps[i-1].degree
			case 1:
				even, odd := steps[i], steps[i+1]
				deg := 1 << bits.Len(uint(even.degree))
				xpow, ok := pe.pow[deg]
				if !ok {
					return 0, fmt.Errorf("giant step needs power %d, not in the basis", deg)
				}
				// EvaluateMonomial(a = even, b = odd, X^deg).
				bct := odd.ct
				if e.node(bct).Degree == 2 {
					bct = e.relin(bct)
				}
				bct = e.hmult(e.rescale(bct), xpow)
				odd.ct = e.hadd(bct, even.ct)
				odd.degree = 2*deg - 1
				steps[i] = nil
			}
		}
		k := 0
		for _, s := range steps {
			if s != nil {
				steps[k] = s
				k++
			}
		}
		steps = steps[:k]
	}
	res := steps[0].ct
	if e.node(res).Degree == 2 {
		res = e.relin(res)
	}
	return e.rescale(res), nil
}

// optimalSplit is bignum.OptimalSplit (utils/bignum/polynomial.go).
func optimalSplit(logDegree int) int {
	s := logDegree >> 1
	a := 1<<s + 1<<(logDegree-s) + logDegree - s - 3
	b := 1<<(s+1) + 1<<(logDegree-s-1) + logDegree - s - 4
	if a > b {
		s++
	}
	return s
}

// splitDegree is polynomial.SplitDegree (power_basis.go): T_n from
// T_a·T_b.
func splitDegree(n int) (int, int) {
	if n&(n-1) == 0 {
		return n / 2, n / 2
	}
	k := bits.Len(uint(n-1)) - 1
	return 1<<k - 1, n + 1 - 1<<k
}

// genPower is PowerBasis.GenPower with lazy = false: make T_n and rescale it.
func (pe *polyEval) genPower(n int) error {
	if _, ok := pe.pow[n]; ok {
		return nil
	}
	fresh, err := pe.genPowerRec(n)
	if err != nil {
		return err
	}
	if fresh {
		pe.pow[n] = pe.e.rescale(pe.pow[n])
	}
	return nil
}

// genPowerRec is PowerBasis.genPower (lazy = false): T_n = 2·T_a·T_b − T_|a−b|
// (Chebyshev; x^a·x^b for monomials) with MulRelin; freshly made operands
// are rescaled first. It reports whether T_n was made (and so still needs
// its rescale).
func (pe *polyEval) genPowerRec(n int) (bool, error) {
	if _, ok := pe.pow[n]; ok {
		return false, nil
	}
	pe.iterations++
	if n < 2 || pe.iterations > 1<<16 {
		return false, fmt.Errorf("power basis: cannot make power %d", n)
	}
	a, b := splitDegree(n)
	freshA, err := pe.genPowerRec(a)
	if err != nil {
		return false, err
	}
	freshB, err := pe.genPowerRec(b)
	if err != nil {
		return false, err
	}
	e := pe.e
	if freshA {
		pe.pow[a] = e.rescale(pe.pow[a])
	}
	if freshB {
		pe.pow[b] = e.rescale(pe.pow[b])
	}
	t := e.relin(e.hmult(pe.pow[a], pe.pow[b]))
	if pe.chebyshev {
		t = e.hadd(t, t)
		if c := a - b; c == 0 {
			t = e.konst(t, lower.BootConst{Kind: lower.ConstChebOne, Poly: pe.poly}) // − T_0
		} else {
			if c < 0 {
				c = -c
			}
			pe.pow[n] = t
			if err := pe.genPower(c); err != nil {
				return false, err
			}
			// Lattigo's Sub brings T_c (scale ≈ Δ) to the product's scale
			// (≈ Δ²) by an integer multiplication first.
			tn, tc := e.align(pe.pow[n], pe.pow[c])
			t = e.hsub(tn, e.konst(tc, lower.BootConst{Kind: lower.ConstChebMatch, Poly: pe.poly}))
		}
	}
	pe.pow[n] = t
	return true, nil
}

// recursePS is polynomial.recursePS: split p at the next power of two
// nextPower ≥ the base with p = q·T_nextPower + r, q one level higher.
func (pe *polyEval) recursePS(logSplit, target int, p psPoly, out *[]psPoly) error {
	pe.iterations++
	if pe.iterations > 1<<16 {
		return fmt.Errorf("Paterson–Stockmeyer split does not terminate")
	}
	if p.degree < 1<<logSplit {
		if p.lead && logSplit > 1 && p.maxDeg > 1<<bits.Len(uint(p.maxDeg))-1<<(logSplit-1) {
			return pe.recursePS(optimalSplit(bits.Len(uint(p.degree))), target, p, out)
		}
		p.level = target
		*out = append(*out, p)
		return nil
	}
	next := 1 << logSplit
	for next < p.degree>>1+1 {
		next <<= 1
	}
	// bignum.Polynomial.Factorize / polynomial.Polynomial.Factorize.
	q := psPoly{degree: p.degree - next, maxDeg: p.maxDeg, lead: p.lead}
	r := psPoly{degree: next - 1, maxDeg: next - 1}
	if p.maxDeg != p.degree {
		r.maxDeg = p.maxDeg - (p.degree - next + 1)
	}
	if err := pe.recursePS(logSplit, target+1, q, out); err != nil {
		return err
	}
	return pe.recursePS(logSplit, target, r, out)
}

// babyStep is EvaluatePolynomialVectorFromPowerBasis for baby step i:
// c_0 + Σ c_k·T_k over the keys k of the right parity, at the baby step's
// level and target scale (c_0 rides on the first term's constant). A
// polynomial with only a constant term is a fresh ciphertext holding the
// constant in Lattigo; here it is T_1 times 0 plus the constant, the same
// ciphertext, and the DAG stays connected.
func (pe *polyEval) babyStep(p psPoly, i int) (int, error) {
	e := pe.e
	minDeg := p.degree
	if pe.even && !pe.odd {
		minDeg--
	}
	ref := lower.BootConst{Kind: lower.ConstPoly, Poly: pe.poly, Step: i, AddC0: pe.even}
	if minDeg <= 0 {
		return e.konst(e.down(pe.pow[1], p.level), ref), nil
	}
	res := -1
	for k := p.degree; k > 0; k-- {
		if !((k&1 == 0 && pe.even) || (k&1 == 1 && pe.odd)) {
			continue
		}
		xk, ok := pe.pow[k]
		if !ok {
			return 0, fmt.Errorf("baby step needs power %d, not in the basis", k)
		}
		if e.level(xk) < p.level {
			return 0, fmt.Errorf("power %d at level %d below baby-step level %d", k, e.level(xk), p.level)
		}
		ref.Coeff = k
		t := e.konst(e.down(xk, p.level), ref)
		ref.AddC0 = false
		if res < 0 {
			res = t
		} else {
			res = e.hadd(res, t)
		}
	}
	return res, nil
}
