package bootconst

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/mod1"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// Spec returns the ir.BootSpec of Lattigo bootstrapping
// parameters (as made by bootstrapping.NewParametersFromLiteral). It refuses
// the variants compiler.ExpandBoot does not model: several DFT matrices per level,
// bootstrapping iterations (META-BTS), ring-degree switching (residual N ≠
// bootstrapping N) and the conjugate-invariant ring.
func Spec(btp bootstrapping.Parameters) (ir.BootSpec, error) {
	bp := btp.BootstrappingParameters
	switch {
	case btp.IterationsParameters != nil:
		return ir.BootSpec{}, fmt.Errorf("bootconst: boot spec: bootstrapping iterations are not modelled")
	case btp.ResidualParameters.RingType() != ring.Standard:
		return ir.BootSpec{}, fmt.Errorf("bootconst: boot spec: only the standard ring is modelled")
	case btp.ResidualParameters.LogN() != bp.LogN():
		return ir.BootSpec{}, fmt.Errorf("bootconst: boot spec: ring-degree switching (logN %d → %d) is not modelled", btp.ResidualParameters.LogN(), bp.LogN())
	}
	for _, m := range []struct {
		name   string
		levels []int
	}{{"CoeffsToSlots", btp.CoeffsToSlotsParameters.Levels}, {"SlotsToCoeffs", btp.SlotsToCoeffsParameters.Levels}} {
		for i, l := range m.levels {
			if l != 1 {
				return ir.BootSpec{}, fmt.Errorf("bootconst: boot spec: %s level %d merges %d matrices; one per level is modelled", m.name, i, l)
			}
		}
	}
	evm, err := mod1.NewParametersFromLiteral(bp, btp.Mod1ParametersLiteral)
	if err != nil {
		return ir.BootSpec{}, fmt.Errorf("bootconst: boot spec: %w", err)
	}
	return ir.BootSpec{
		OutputLevel:   btp.ResidualParameters.MaxLevel(),
		CtSLevels:     len(btp.CoeffsToSlotsParameters.Levels),
		StCLevels:     len(btp.SlotsToCoeffsParameters.Levels),
		EvalModDegree: evm.Mod1Poly.Degree(),
		DoubleAngle:   evm.DoubleAngle,
		LogSlots:      btp.CoeffsToSlotsParameters.LogSlots,
		LogN:          bp.LogN(),
		SineEvalMod:   evm.Mod1Type == mod1.SinContinuous,
		ArcSineDegree: btp.Mod1ParametersLiteral.Mod1InvDegree,
	}, nil
}
