package lower

import (
	"fmt"
	"strconv"
	"strings"
)

// BootConstKind says which constant of the bootstrapping circuit a
// BootConst names. Each is the scalar of one Lattigo v6.1.1 call
// (circuits/ckks/bootstrapping and the circuits it calls); the value
// depends on the bootstrapping parameters and on the scale of the operand,
// so it is resolved when the node runs (engine.ConstantProvider).
type BootConstKind string

// The constants of compiler.ExpandBoot's circuit.
const (
	// ConstScaleDown: × round(Q_ℓ/scale / message ratio) (Evaluator.ScaleDown).
	ConstScaleDown BootConstKind = "scaledown"
	// ConstModUp: × round(scaling factor / message ratio / scale) when that
	// exceeds 1, else × 1 (Evaluator.ModUp, after the lift).
	ConstModUp BootConstKind = "modup"
	// ConstTrace: × (N/2n)⁻¹ mod Q before the trace over unused slots
	// (rlwe.Evaluator.Trace).
	ConstTrace BootConstKind = "trace"
	// ConstMinusI and ConstI: × −i (CoeffsToSlots) and × i (SlotsToCoeffs).
	ConstMinusI BootConstKind = "-i"
	ConstI      BootConstKind = "i"
	// ConstMod1In: the scale becomes the EvalMod scaling factor and the
	// Chebyshev interval offset is added (mod1.Evaluator, cosine variants).
	ConstMod1In BootConstKind = "mod1-in"
	// ConstChebOne: − 1 at the operand's scale (T_2k = 2·T_k² − T_0).
	ConstChebOne BootConstKind = "cheb-one"
	// ConstChebMatch: × ⌊scale(T_a·T_b)/scale(T_c)⌋, the integer Lattigo's
	// Sub multiplies the lower-scale operand by (T_{a+b} = 2·T_a·T_b − T_c).
	ConstChebMatch BootConstKind = "cheb-match"
	// ConstPoly: × c_k rescaled to the baby step's target scale, plus c_0
	// if AddC0 (polynomial.Evaluator.EvaluatePolynomialVectorFromPowerBasis).
	ConstPoly BootConstKind = "poly"
	// ConstDoubleAngle: − (√2π)^(2^(Step+1)) at the operand's scale.
	ConstDoubleAngle BootConstKind = "double-angle"
	// ConstMod1Out: the scale becomes the default scale (Evaluator.EvalMod).
	ConstMod1Out BootConstKind = "mod1-out"
)

var bootConstKinds = []BootConstKind{ConstScaleDown, ConstModUp, ConstTrace, ConstMinusI, ConstI, ConstMod1In,
	ConstChebOne, ConstChebMatch, ConstPoly, ConstDoubleAngle, ConstMod1Out}

// BootConst names one constant of a bootstrapping circuit. compiler.ExpandBoot
// writes it, as String(), into the Name of the CMult node that applies it.
type BootConst struct {
	Kind BootConstKind
	// Poly is the polynomial (0: the EvalMod approximation, 1: the arcsine)
	// of ConstChebOne, ConstChebMatch and ConstPoly.
	Poly int
	// Step is the baby step (ConstPoly, in Lattigo's
	// PatersonStockmeyerPolynomial order) or the double-angle iteration.
	Step int
	// Coeff is the power k multiplied by c_k (ConstPoly; 0: a baby step that
	// is its constant alone, the operand multiplied by 0).
	Coeff int
	// AddC0 adds the baby step's constant coefficient (ConstPoly).
	AddC0 bool
}

const bootConstPrefix = "bootconst/"

// String is the node name: bootconst/<kind>/p<poly>/s<step>/c<coeff>[/+c0].
func (c BootConst) String() string {
	s := fmt.Sprintf("%s%s/p%d/s%d/c%d", bootConstPrefix, c.Kind, c.Poly, c.Step, c.Coeff)
	if c.AddC0 {
		s += "/+c0"
	}
	return s
}

// IsBootConst reports whether a node name names a bootstrapping constant.
func IsBootConst(name string) bool { return strings.HasPrefix(name, bootConstPrefix) }

// ParseBootConst reads a name written by BootConst.String.
func ParseBootConst(name string) (BootConst, error) {
	bad := func(why string) (BootConst, error) {
		return BootConst{}, fmt.Errorf("lower: boot constant %q: %s", name, why)
	}
	if !IsBootConst(name) {
		return bad("no " + bootConstPrefix + " prefix")
	}
	f := strings.Split(strings.TrimPrefix(name, bootConstPrefix), "/")
	if len(f) != 4 && len(f) != 5 {
		return bad("want kind/p/s/c[/+c0]")
	}
	var c BootConst
	for _, k := range bootConstKinds {
		if string(k) == f[0] {
			c.Kind = k
		}
	}
	if c.Kind == "" {
		return bad("unknown kind")
	}
	for i, dst := range []*int{&c.Poly, &c.Step, &c.Coeff} {
		field := f[i+1]
		if len(field) < 2 || field[0] != "psc"[i] {
			return bad(fmt.Sprintf("field %d is not %c<number>", i+1, "psc"[i]))
		}
		v, err := strconv.Atoi(field[1:])
		if err != nil || v < 0 || v > 1<<20 {
			return bad(fmt.Sprintf("field %d: not a number in [0, 2^20]", i+1))
		}
		*dst = v
	}
	if len(f) == 5 {
		if f[4] != "+c0" {
			return bad("trailing field is not +c0")
		}
		c.AddC0 = true
	}
	if c.String() != name {
		return bad("not in canonical form")
	}
	return c, nil
}
