package lower

import (
	"fmt"
	"math/big"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/bignum"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// CKKSConstant returns the residues mod q_0…q_level by which Lattigo's CKKS
// evaluator multiplies a ciphertext for ct × c, and the scale the product
// gains: integers multiply as they are; other reals are scaled by the level's
// top prime(s) and rounded half away from zero.
func CKKSConstant(params ckks.Parameters, level int, c float64) ([]uint64, rlwe.Scale) {
	v := bignum.ToComplex(c, params.EncodingPrecision())
	Q := params.Q()
	scale := rlwe.NewScale(1)
	if !v.IsInt() {
		scale = rlwe.NewScale(Q[level])
		for i := 1; i < params.LevelsConsumedPerRescaling(); i++ {
			scale = scale.Mul(rlwe.NewScale(Q[level-i]))
		}
	}
	r := new(big.Float).Mul(v[0], &scale.Value)
	switch v[0].Sign() {
	case 1:
		r.Add(r, new(big.Float).SetFloat64(0.5))
	case -1:
		r.Sub(r, new(big.Float).SetFloat64(0.5))
	}
	n, _ := r.Int(nil)
	return residues(n, Q[:level+1]), scale
}

// BGVConstant returns the residues by which Lattigo's BGV evaluator
// multiplies a ciphertext for ct × c: c mod t, centered, then mod each q_i.
func BGVConstant(params bgv.Parameters, level int, c int64) []uint64 {
	t := new(big.Int).SetUint64(params.PlaintextModulus())
	v := new(big.Int).Mod(big.NewInt(c), t)
	if v.Cmp(new(big.Int).Rsh(t, 1)) == 1 {
		v.Sub(v, t)
	}
	return residues(v, params.Q()[:level+1])
}

func residues(n *big.Int, moduli []uint64) []uint64 {
	out := make([]uint64, len(moduli))
	for i, q := range moduli {
		out[i] = new(big.Int).Mod(n, new(big.Int).SetUint64(q)).Uint64()
	}
	return out
}

// Constant is a resolved scalar operation on a CKKS ciphertext at a level,
// the arithmetic of Lattigo's evaluateWithScalar (schemes/ckks): every
// coefficient of both polynomials is multiplied by Mul, then Add is added
// to the first polynomial. Index 0 holds the residues (one per q_0…q_level)
// for the first N/2 NTT coefficients, index 1 for the rest: a Gaussian
// integer a + b·i is a + b·ω on one half and a − b·ω on the other (ω a
// fourth root of unity mod q). Add[0] nil adds nothing. The result has
// scale Scale.
type Constant struct {
	Mul   [2][]uint64
	Add   [2][]uint64
	Scale rlwe.Scale
}

// OpConstant is a CMult whose constant is a Constant (a named constant,
// such as a BootConst): the ciphertext times a scalar, or a vector object
// when the two halves differ, plus a scalar on the first polynomial.
const OpConstant ir.Op = "CMult(named)"

// halvesEqual reports whether both halves of a residue pair are the same.
func halvesEqual(h [2][]uint64) bool {
	if len(h[0]) != len(h[1]) {
		return false
	}
	for i := range h[0] {
		if h[0][i] != h[1][i] {
			return false
		}
	}
	return true
}

// MulVector returns the multiplier as one limb per modulus (Mul[0] on the
// first N/2 coefficients, Mul[1] on the rest): the vector object of the
// lowered operation when the halves differ.
func (c Constant) MulVector(logN int) [][]uint64 {
	n := 1 << logN
	out := make([][]uint64, len(c.Mul[0]))
	for i := range out {
		out[i] = make([]uint64, n)
		for j := range out[i] {
			out[i][j] = c.Mul[j/(n/2)][i]
		}
	}
	return out
}

// NeedsVector reports whether the lowered operation reads the multiplier
// as a vector object (input 2).
func (c Constant) NeedsVector() bool { return !halvesEqual(c.Mul) }

// ConstantOp lowers a Constant at a level: MODMUL of every limb by the
// multiplier (a scalar, or the vector object of MulVector), then MODADD of
// the addend to the first polynomial's limbs.
func ConstantOp(r Ring, level int, c Constant) (*Program, error) {
	l, err := newLowering(&Context{Scheme: fhe.CKKS, Ring: r, Level: level})
	if err != nil {
		return nil, err
	}
	for h := 0; h < 2; h++ {
		if len(c.Mul[h]) != level+1 {
			return nil, fmt.Errorf("lower: constant needs %d multiplier residues per half, got %d", level+1, len(c.Mul[h]))
		}
		if c.Add[0] != nil && len(c.Add[h]) != level+1 {
			return nil, fmt.Errorf("lower: constant needs %d addend residues per half, got %d", level+1, len(c.Add[h]))
		}
		for i := 0; i <= level; i++ {
			if c.Mul[h][i] >= r.Q[i] || (c.Add[0] != nil && c.Add[h][i] >= r.Q[i]) {
				return nil, fmt.Errorf("lower: constant residue %d not reduced", i)
			}
		}
	}
	if c.Add[0] != nil && !halvesEqual(c.Add) {
		return nil, fmt.Errorf("lower: a complex addend is not lowered (bootstrapping adds real constants only)")
	}
	res := &Program{Op: OpConstant}
	a := l.loadCt(objIn0, 2)
	res.Inputs = []Object{l.ctObj("ct0", objIn0, 2)}
	var vec poly
	if c.NeedsVector() {
		vec = l.loadCt(objIn1, 1)[0]
		res.Inputs = append(res.Inputs, l.ctObj("mul", objIn1, 1))
	}
	for p := range a {
		for i := range a[p] {
			if vec != nil {
				l.op(isa.OpModMul, i, isa.FlagPlain, a[p][i], vec[i], a[p][i])
			} else if m := c.Mul[0][i]; m != 1 {
				l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, a[p][i], l.scalar(m), a[p][i])
			}
			if p == 0 && c.Add[0] != nil && c.Add[0][i] != 0 {
				l.op(isa.OpModAdd, i, isa.FlagScalarB, a[p][i], l.scalar(c.Add[0][i]), a[p][i])
			}
		}
	}
	l.storeCt(a)
	res.Output = l.ctObj("out", objOut, 2)
	prog, err := l.program()
	if err != nil {
		return nil, err
	}
	res.Program = prog
	return res, nil
}
