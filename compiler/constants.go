package compiler

import (
	"math/big"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/bignum"
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
