package bootconst

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/dft"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/mod1"
	"github.com/tuneinsight/lattigo/v6/circuits/common/polynomial"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/bignum"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/engine"
)

// Provider gives the constants of one set of bootstrapping parameters.
type Provider struct {
	btp    bootstrapping.Parameters
	params ckks.Parameters // the bootstrapping circuit's parameters
	mod1   mod1.Parameters
	c2s    dft.Matrix
	s2c    dft.Matrix
	ps     *polynomial.PatersonStockmeyerPolynomialVector // the EvalMod polynomial's split
}

// New takes the DFT matrices and EvalMod parameters of a Lattigo
// bootstrapping evaluator (bootstrapping.NewEvaluator builds the matrices
// with their scaling folded in, so they are taken from it, not rebuilt).
func New(ev *bootstrapping.Evaluator) (*Provider, error) {
	if ev == nil {
		return nil, fmt.Errorf("bootconst: nil evaluator")
	}
	p := &Provider{btp: ev.Parameters, params: ev.BootstrappingParameters, mod1: ev.Mod1Parameters, c2s: ev.C2SDFTMatrix, s2c: ev.S2CDFTMatrix}
	if _, err := Spec(p.btp); err != nil {
		return nil, fmt.Errorf("bootconst: %w", err)
	}
	if p.btp.EphemeralSecretWeight != 0 {
		return nil, fmt.Errorf("bootconst: the sparse-secret encapsulation (EphemeralSecretWeight %d) is not in the expansion", p.btp.EphemeralSecretWeight)
	}
	return p, nil
}

// Stored returns the DFT diagonals the expanded program p reads (its
// Stored nodes named …/cts<m>/diag<d> and …/stc<m>/diag<d>) as plaintexts:
// Lattigo's encoded diagonal d of matrix m (pre-rotated by its giant step),
// out of Montgomery form, at the matrix's level and scale.
func (p *Provider) Stored(prog *ir.Program) (map[string][]engine.Value, error) {
	out := map[string][]engine.Value{}
	for _, n := range prog.Nodes {
		if n.Op != ir.OpStored {
			continue
		}
		f := strings.Split(n.Name, "/")
		if len(f) < 2 || !strings.HasPrefix(f[len(f)-1], "diag") {
			continue
		}
		m, d, mat, err := p.diagonalRef(f[len(f)-2], f[len(f)-1])
		if err != nil {
			return nil, fmt.Errorf("bootconst: stored %q: %w", n.Name, err)
		}
		if m >= len(mat.Matrices) {
			return nil, fmt.Errorf("bootconst: stored %q: Lattigo's DFT has %d matrices", n.Name, len(mat.Matrices))
		}
		lt := mat.Matrices[m]
		vec, ok := lt.Vec[d]
		if !ok {
			return nil, fmt.Errorf("bootconst: stored %q: Lattigo's matrix %d has no diagonal %d", n.Name, m, d)
		}
		if n.Level > lt.LevelQ {
			return nil, fmt.Errorf("bootconst: stored %q at level %d, Lattigo's matrix is at level %d", n.Name, n.Level, lt.LevelQ)
		}
		pt := rlwe.NewPlaintext(p.params, lt.LevelQ)
		pt.Value.CopyLvl(lt.LevelQ, vec.Q)
		p.params.RingQ().AtLevel(lt.LevelQ).IMForm(pt.Value, pt.Value)
		pt.IsNTT, pt.IsMontgomery, pt.IsBatched = true, false, true
		pt.Scale = lt.Scale
		pt.LogDimensions = lt.LogDimensions
		vs := make([]engine.Value, n.Count)
		for k := range vs {
			vs[k] = engine.Value{Pt: pt}
		}
		out[n.Name] = vs
	}
	return out, nil
}

// DiagonalQP implements engine.DiagonalProvider: the limbs of Lattigo's
// encoded diagonal over q_0…q_level and the special primes, in the
// Montgomery form Lattigo multiplies them in.
func (p *Provider) DiagonalQP(name string, level int) ([][]uint64, error) {
	f := strings.Split(name, "/")
	if len(f) < 2 {
		return nil, fmt.Errorf("bootconst: %q is not a diagonal name", name)
	}
	m, d, mat, err := p.diagonalRef(f[len(f)-2], f[len(f)-1])
	if err != nil {
		return nil, fmt.Errorf("bootconst: %q: %w", name, err)
	}
	if m >= len(mat.Matrices) {
		return nil, fmt.Errorf("bootconst: %q: Lattigo's DFT has %d matrices", name, len(mat.Matrices))
	}
	lt := mat.Matrices[m]
	vec, ok := lt.Vec[d]
	if !ok || level > lt.LevelQ || vec.P.Level() != p.params.PCount()-1 {
		return nil, fmt.Errorf("bootconst: %q: no diagonal %d over the special primes at level %d", name, d, level)
	}
	out := append([][]uint64(nil), vec.Q.Coeffs[:level+1]...)
	return append(out, vec.P.Coeffs...), nil
}

// diagonalRef reads "cts<m>" / "stc<m>" and "diag<d>".
func (p *Provider) diagonalRef(matrix, diag string) (m, d int, mat dft.Matrix, err error) {
	switch {
	case strings.HasPrefix(matrix, "cts"):
		mat = p.c2s
	case strings.HasPrefix(matrix, "stc"):
		mat = p.s2c
	default:
		return 0, 0, mat, fmt.Errorf("matrix %q is neither cts<m> nor stc<m>", matrix)
	}
	if m, err = strconv.Atoi(matrix[3:]); err != nil || m < 0 {
		return 0, 0, mat, fmt.Errorf("matrix %q: bad index", matrix)
	}
	if d, err = strconv.Atoi(strings.TrimPrefix(diag, "diag")); err != nil || d < 0 {
		return 0, 0, mat, fmt.Errorf("diagonal %q: bad index", diag)
	}
	return m, d, mat, nil
}

// Constant implements engine.ConstantProvider: each kind is the scalar of
// the Lattigo call named in lower.BootConstKind, computed as Lattigo
// computes it (bigComplexToRNSScalar and evaluateWithScalar in
// schemes/ckks) from the operand's scale.
func (p *Provider) Constant(name string, level int, in rlwe.MetaData, partner *rlwe.MetaData) (lower.Constant, error) {
	ref, err := lower.ParseBootConst(name)
	if err != nil {
		return lower.Constant{}, err
	}
	if level < 0 || level > p.params.MaxLevel() {
		return lower.Constant{}, fmt.Errorf("bootconst: level %d outside the chain", level)
	}
	c := lower.Constant{Scale: in.Scale}
	one := p.scalar(level, nil, bignum.ToComplex(1, p.params.EncodingPrecision()))
	c.Mul = one
	switch ref.Kind {
	case lower.ConstScaleDown:
		// Evaluator.ScaleDown at level 0 (the expansion drops there first).
		if level != 0 {
			return c, fmt.Errorf("bootconst: ScaleDown is modelled at level 0, not %d", level)
		}
		r := p.params.RingQ()
		current := rlwe.NewScale(r.ModulusAtLevel[level]).Div(in.Scale)
		up := current.Div(rlwe.NewScale(p.mod1.MessageRatio()))
		if up.Cmp(rlwe.NewScale(0.5)) == -1 {
			return c, fmt.Errorf("bootconst: Q/scale = %g < 0.5·q/message ratio", current.Float64())
		}
		k := up.BigInt()
		c.Mul = p.integer(level, k)
		c.Scale = in.Scale.Mul(rlwe.NewScale(k))
	case lower.ConstModUp:
		if s := (p.mod1.ScalingFactor().Float64() / p.mod1.MessageRatio()) / in.Scale.Float64(); s > 1 {
			// ModUp multiplies by the exact integer (ring.MulScalar) and
			// records the unrounded factor in the scale.
			c.Mul = p.exact(level, new(big.Int).SetUint64(uint64(math.Round(s))))
			c.Scale = in.Scale.Mul(rlwe.NewScale(s))
		}
	case lower.ConstTrace:
		gap := 1 << (p.params.LogN() - p.btp.CoeffsToSlotsParameters.LogSlots - 1)
		inv := new(big.Int).ModInverse(big.NewInt(int64(gap)), p.params.RingQ().ModulusAtLevel[level])
		if inv == nil {
			return c, fmt.Errorf("bootconst: %d has no inverse", gap)
		}
		// Trace multiplies by the exact integer (ring.MulScalarBigint).
		c.Mul = p.exact(level, inv)
	case lower.ConstMinusI, lower.ConstI:
		v := complex(0, 1)
		if ref.Kind == lower.ConstMinusI {
			v = -v
		}
		c.Mul = p.scalar(level, nil, bignum.ToComplex(v, p.params.EncodingPrecision()))
	case lower.ConstMod1In:
		c.Scale = p.mod1.ScalingFactor()
		if p.mod1.Mod1Type == mod1.CosDiscrete || p.mod1.Mod1Type == mod1.CosContinuous {
			off := new(big.Float).Sub(&p.mod1.Mod1Poly.B, &p.mod1.Mod1Poly.A)
			off.Mul(off, new(big.Float).SetFloat64(p.mod1.IntervalShrinkFactor()))
			off.Quo(new(big.Float).SetFloat64(-0.5), off)
			c.Add = p.scalar(level, &c.Scale.Value, bignum.ToComplex(off, p.params.EncodingPrecision()))
		}
	case lower.ConstChebOne:
		c.Add = p.scalar(level, &in.Scale.Value, bignum.ToComplex(-1, p.params.EncodingPrecision()))
	case lower.ConstChebMatch:
		if partner == nil {
			return c, fmt.Errorf("bootconst: %s needs the scale of the product it is subtracted from", ref.Kind)
		}
		ratio := partner.Scale.Div(in.Scale).Value
		k, _ := ratio.Int(nil) // truncated, as Lattigo's evaluateInPlace
		if k.Sign() <= 0 {
			return c, fmt.Errorf("bootconst: %s: the product's scale is below the operand's", ref.Kind)
		}
		c.Mul = p.integer(level, k)
		c.Scale = in.Scale.Mul(rlwe.NewScale(k))
	case lower.ConstPoly:
		return p.polyConstant(ref, level, in)
	case lower.ConstDoubleAngle:
		// mod1.Evaluator: sqrt2pi squared once per iteration, then subtracted
		// (EvalMod calls it with scaling 1).
		s := complex(p.mod1.Sqrt2Pi, 0)
		for i := 0; i <= ref.Step; i++ {
			s *= s
		}
		c.Add = p.scalar(level, &in.Scale.Value, bignum.ToComplex(-s, p.params.EncodingPrecision()))
	case lower.ConstMod1Out:
		c.Scale = p.params.DefaultScale()
	default:
		return c, fmt.Errorf("bootconst: no value for %s", ref.Kind)
	}
	return c, nil
}

// polyConstant is one term of a baby step (MulThenAdd of T_k by c_k into a
// ciphertext at the target scale, and Add of c_0 at that scale).
func (p *Provider) polyConstant(ref lower.BootConst, level int, in rlwe.MetaData) (lower.Constant, error) {
	if ref.Poly != 0 {
		return lower.Constant{}, fmt.Errorf("bootconst: constants of the arcsine polynomial are not provided")
	}
	ps, err := p.split()
	if err != nil {
		return lower.Constant{}, err
	}
	steps := ps.Value[0].Value
	if ref.Step >= len(steps) {
		return lower.Constant{}, fmt.Errorf("bootconst: baby step %d of %d", ref.Step, len(steps))
	}
	bs := steps[ref.Step]
	if bs.Level != level {
		return lower.Constant{}, fmt.Errorf("bootconst: baby step %d runs at level %d, Lattigo's at %d", ref.Step, level, bs.Level)
	}
	if ref.Coeff >= len(bs.Coeffs) {
		return lower.Constant{}, fmt.Errorf("bootconst: baby step %d has degree %d, no coefficient %d", ref.Step, len(bs.Coeffs)-1, ref.Coeff)
	}
	c := lower.Constant{Scale: bs.Scale}
	zero := [2][]uint64{make([]uint64, level+1), make([]uint64, level+1)}
	c.Mul = zero
	if ref.Coeff > 0 {
		if bs.Scale.Cmp(in.Scale) != 1 {
			return c, fmt.Errorf("bootconst: baby step %d: target scale not above T_%d's (Lattigo's MulThenAdd refuses it)", ref.Step, ref.Coeff)
		}
		if ck := bs.Coeffs[ref.Coeff]; ck != nil {
			ratio := bs.Scale.Div(in.Scale)
			c.Mul = p.scalar(level, &ratio.Value, bignum.ToComplex(ck, p.params.EncodingPrecision()))
		}
	}
	if ref.AddC0 && bs.Coeffs[0] != nil {
		c.Add = p.scalar(level, &bs.Scale.Value, bignum.ToComplex(bs.Coeffs[0], p.params.EncodingPrecision()))
	}
	return c, nil
}

// split is the Paterson–Stockmeyer decomposition Lattigo's
// polynomial.Evaluator.Evaluate makes of the EvalMod polynomial: input at
// the EvalMod level and the scaling factor (mod1.Evaluator sets it),
// output at the scale that the double angles bring back to it.
func (p *Provider) split() (*polynomial.PatersonStockmeyerPolynomialVector, error) {
	if p.ps != nil {
		return p.ps, nil
	}
	evm := p.mod1
	Q := p.params.Q()
	level := evm.LevelQ
	target := evm.ScalingFactor()
	for i := 0; i < evm.DoubleAngle; i++ {
		target = target.Mul(rlwe.NewScale(Q[level-evm.Mod1Poly.Depth()-evm.DoubleAngle+i+1]))
		target.Value.Sqrt(&target.Value)
	}
	poly := evm.Mod1Poly
	if evm.Mod1InvPoly == nil {
		// mod1.Evaluator multiplies the coefficients by scaling^(1/r), 1 here.
		poly = evm.Mod1Poly.Clone()
	}
	vec := polynomial.PolynomialVector{Value: []polynomial.Polynomial{{Polynomial: poly, MaxDeg: poly.Degree(), Lead: true}}}
	ps := vec.PatersonStockmeyerPolynomial(p.params.Parameters, level, evm.ScalingFactor(), rlwe.NewScale(target), simEvaluator{p.params})
	p.ps = &ps
	return p.ps, nil
}

// exact is the residues of k on both halves (Lattigo's ring-level scalar
// multiplications, MulScalar and MulScalarBigint, take k exactly).
func (p *Provider) exact(level int, k *big.Int) [2][]uint64 {
	r := p.params.RingQ().AtLevel(level).NewRNSScalarFromBigint(k)
	return [2][]uint64{r, append([]uint64(nil), r...)}
}

// integer is an integer scalar as Lattigo's Mul(ct, k) takes it: through
// bignum.ToComplex at the encoding precision, then its residues on both
// halves.
func (p *Provider) integer(level int, k *big.Int) [2][]uint64 {
	return p.scalar(level, nil, bignum.ToComplex(k, p.params.EncodingPrecision()))
}

// scalar is Lattigo's bigComplexToRNSScalar followed by the conversion of
// evaluateWithScalar: round(v·scale) half away from zero, real part a and
// imaginary part b, then a + b·ω on the first N/2 NTT coefficients and
// a − b·ω on the others (ω = RootsForward[1] in Montgomery form, as
// Lattigo multiplies it).
func (p *Provider) scalar(level int, scale *big.Float, v *bignum.Complex) [2][]uint64 {
	if scale == nil {
		scale = new(big.Float).SetFloat64(1)
	}
	round := func(x *big.Float) *big.Int {
		out := new(big.Int)
		if x == nil {
			return out
		}
		r := new(big.Float).Mul(x, scale)
		switch x.Cmp(new(big.Float)) {
		case 1:
			r.Add(r, new(big.Float).SetFloat64(0.5))
		case -1:
			r.Sub(r, new(big.Float).SetFloat64(0.5))
		}
		r.Int(out)
		return out
	}
	rq := p.params.RingQ().AtLevel(level)
	re, im := rq.NewRNSScalarFromBigint(round(v[0])), rq.NewRNSScalarFromBigint(round(v[1]))
	out := [2][]uint64{make([]uint64, level+1), make([]uint64, level+1)}
	for i, s := range rq.SubRings[:level+1] {
		b := ring.MRed(im[i], s.RootsForward[1], s.Modulus, s.MRedConstant)
		out[0][i] = ring.CRed(re[i]+b, s.Modulus)
		out[1][i] = ring.CRed(re[i]+s.Modulus-b, s.Modulus)
	}
	return out
}
