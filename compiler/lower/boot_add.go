package lower

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
)

// OpAddMixed is an HAdd or HSub of ciphertexts of different degrees, as
// Lattigo's evaluator adds them: the common polynomials are added (or
// subtracted) and the longer operand's extra polynomials are carried (or
// negated, when they belong to the subtrahend). The bootstrapping's
// Paterson–Stockmeyer giant steps add a degree-2 product to a baby step.
const OpAddMixed ir.Op = "HAdd(mixed degrees)"

// AddMixed lowers a ± b for operands of polysA and polysB polynomials
// (2 or 3) at ctx.Level; the result has max(polysA, polysB).
func AddMixed(ctx *Context, sub bool, polysA, polysB int) (*Program, error) {
	if polysA < 2 || polysA > 3 || polysB < 2 || polysB > 3 {
		return nil, fmt.Errorf("lower: mixed addition of %d- and %d-polynomial ciphertexts", polysA, polysB)
	}
	l, err := newLowering(ctx)
	if err != nil {
		return nil, err
	}
	a, b := l.loadCt(objIn0, polysA), l.loadCt(objIn1, polysB)
	code := isa.OpModAdd
	if sub {
		code = isa.OpModSub
	}
	out := make([]poly, max(polysA, polysB))
	for p := range out {
		switch {
		case p < polysA && p < polysB:
			for i := range a[p] {
				l.op(code, i, 0, a[p][i], b[p][i], a[p][i])
			}
			out[p] = a[p]
		case p < polysA:
			out[p] = a[p]
		default:
			if sub {
				for i := range b[p] {
					l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, b[p][i], l.scalar(ctx.Ring.Q[i]-1), b[p][i])
				}
			}
			out[p] = b[p]
		}
	}
	l.storeCt(out)
	res := &Program{Op: OpAddMixed,
		Inputs: []Object{l.ctObj("ct0", objIn0, polysA), l.ctObj("ct1", objIn1, polysB)},
		Output: l.ctObj("out", objOut, len(out))}
	if res.Program, err = l.program(); err != nil {
		return nil, err
	}
	return res, nil
}
