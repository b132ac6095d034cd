package lwepir

import (
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// HoistingRotator is a Rotator that also rotates one ciphertext by several
// amounts from one decomposition of it (hoisting; Halevi and Shoup,
// "Faster Homomorphic Linear Transformations in HElib", CRYPTO 2018): the
// inverse NTT of c1 and its extension to the key-switching basis, half a
// key switch, are done once, not once per amount. Each amount needs its own
// Galois key. outs[i] is in rotated by ks[i] (no out may be in).
type HoistingRotator interface {
	Rotator
	RotateColumnsHoisted(in *rlwe.Ciphertext, ks []int, outs []*rlwe.Ciphertext) error
}

// HoistRotations are the rotations a client's keys may add to the
// layout's (Rotations) so that the server hoists the baby steps: 2 … B1−1
// (the rotation by 1 is already one). With them, and a HoistingRotator,
// the B1−1 baby steps are rotations of x hoisted from one decomposition
// instead of a chain of rotations by one: 2.3× faster at the 1 GiB layout
// (BenchmarkBabyStepsHoisted), a quarter of the ring stage, for B1−2 more
// keys of GaloisKeyBytes each (30 × 0.8 MB at B1 = 32). The results
// decrypt to the same values; the ciphertexts differ (each baby step is
// one key switch of x, not j of them: other, smaller noise).
func (l Layout) HoistRotations() []int {
	var r []int
	for k := 2; k < l.B1; k++ {
		r = append(r, k)
	}
	return r
}

// canHoist reports whether keys rotate by every baby-step amount.
func (l Layout) canHoist(keys *EvalKeys) bool {
	for k := 1; k < l.B1; k++ {
		if keys.Rotations[k] == nil {
			return false
		}
	}
	return l.B1 > 2
}

// lattigoRotator is the default Rotations: Lattigo's BGV evaluator, which
// hoists too.
type lattigoRotator struct {
	*bgv.Evaluator
	bp bgv.Parameters
}

func lattigoRotations(bp bgv.Parameters, keys *EvalKeys) (Rotator, error) {
	return lattigoRotator{bgv.NewEvaluator(bp, keys.set()), bp}, nil
}

// RotateColumnsHoisted decomposes in's c1 once and applies each amount's
// key to the decomposition.
func (r lattigoRotator) RotateColumnsHoisted(in *rlwe.Ciphertext, ks []int, outs []*rlwe.Ciphertext) error {
	eval, bp := r.Evaluator, r.bp
	level := in.Level()
	decomp := eval.GetBuffDecompQP()
	eval.DecomposeNTT(level, bp.MaxLevelP(), bp.PCount(), in.Value[1], in.IsNTT, decomp)
	for i, k := range ks {
		if err := eval.AutomorphismHoisted(level, in, decomp, bp.GaloisElementForColRotation(k), outs[i]); err != nil {
			return err
		}
	}
	return nil
}
