package bootconst

import (
	"math/big"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/circuits/common/polynomial"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/bignum"
)

// simEvaluator is the scale and level simulation Lattigo's CKKS polynomial
// evaluator splits a polynomial with (circuits/ckks/polynomial,
// simEvaluator, unexported there): the baby steps' target levels and scales
// come from it, so it is restated here rule for rule.
type simEvaluator struct{ params ckks.Parameters }

var _ polynomial.SimEvaluator = simEvaluator{}

func (d simEvaluator) perRescale() int { return d.params.LevelsConsumedPerRescaling() }

// PolynomialDepth is the depth of a polynomial of the given degree.
func (d simEvaluator) PolynomialDepth(degree int) int {
	return d.perRescale() * (bits.Len64(uint64(degree)) - 1)
}

// Rescale divides by the dropped primes.
func (d simEvaluator) Rescale(op0 *polynomial.SimOperand) {
	for i := 0; i < d.perRescale(); i++ {
		op0.Scale = op0.Scale.Div(rlwe.NewScale(d.params.Q()[op0.Level]))
		op0.Level--
	}
}

// MulNew multiplies scales at the lower level.
func (d simEvaluator) MulNew(op0, op1 *polynomial.SimOperand) *polynomial.SimOperand {
	return &polynomial.SimOperand{Level: min(op0.Level, op1.Level), Scale: op0.Scale.Mul(op1.Scale)}
}

// UpdateLevelAndScaleBabyStep: a leading baby step is evaluated at the
// scale that its final rescale brings to the target.
func (d simEvaluator) UpdateLevelAndScaleBabyStep(lead bool, tLevelOld int, tScaleOld rlwe.Scale) (int, rlwe.Scale) {
	s := tScaleOld
	if lead {
		for i := 0; i < d.perRescale(); i++ {
			s = s.Mul(rlwe.NewScale(d.params.Q()[tLevelOld-i]))
		}
	}
	return tLevelOld, s
}

// UpdateLevelAndScaleGiantStep: the quotient of a split is evaluated one
// rescale higher, at the scale that rescaling and the giant power bring to
// the target.
func (d simEvaluator) UpdateLevelAndScaleGiantStep(lead bool, tLevelOld int, tScaleOld, xPowScale rlwe.Scale) (int, rlwe.Scale) {
	Q := d.params.Q()
	var qi *big.Int
	if lead {
		qi = bignum.NewInt(Q[tLevelOld])
		for i := 1; i < d.perRescale(); i++ {
			qi.Mul(qi, bignum.NewInt(Q[tLevelOld-i]))
		}
	} else {
		qi = bignum.NewInt(Q[tLevelOld+d.perRescale()])
		for i := 1; i < d.perRescale(); i++ {
			qi.Mul(qi, bignum.NewInt(Q[tLevelOld+d.perRescale()-i]))
		}
	}
	return tLevelOld + d.perRescale(), tScaleOld.Mul(rlwe.NewScale(qi)).Div(xPowScale)
}
