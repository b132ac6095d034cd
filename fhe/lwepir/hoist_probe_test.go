package lwepir

import (
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// BenchmarkBabyStepsHoisted prices hoisting (doc.go, "The ring stage's
// cost"): the 1 GiB layout's 31 baby steps as a chain of rotations by one
// under one key (what a client with the layout's keys gets) against 31
// rotations hoisted from one decomposition of x under 31 keys (one per
// amount: Layout.HoistRotations adds 30), both with Lattigo's evaluator
// at the default parameters.
func BenchmarkBabyStepsHoisted(b *testing.B) {
	p := Default()
	bp, err := p.hintParams()
	if err != nil {
		b.Fatal(err)
	}
	const b1 = 32
	kg := rlwe.NewKeyGenerator(bp)
	sk := kg.GenSecretKeyNew()
	var gks []*rlwe.GaloisKey
	for k := 1; k < b1; k++ {
		gks = append(gks, kg.GenGaloisKeyNew(bp.GaloisElementForColRotation(k), sk))
	}
	eval := bgv.NewEvaluator(bp, rlwe.NewMemEvaluationKeySet(nil, gks...))
	x := rlwe.NewEncryptor(bp, sk).EncryptZeroNew(bp.MaxLevel())
	baby := make([]*rlwe.Ciphertext, b1)
	for j := range baby {
		baby[j] = bgv.NewCiphertext(bp, 1, bp.MaxLevel())
	}
	b.Run("chain", func(b *testing.B) {
		for b.Loop() {
			baby[0] = x
			for j := 1; j < b1; j++ {
				if err := eval.RotateColumns(baby[j-1], 1, baby[j]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("hoisted", func(b *testing.B) {
		level := bp.MaxLevel()
		decomp := eval.GetBuffDecompQP()
		for b.Loop() {
			eval.DecomposeNTT(level, bp.MaxLevelP(), bp.PCount(), x.Value[1], true, decomp)
			for j := 1; j < b1; j++ {
				if err := eval.AutomorphismHoisted(level, x, decomp, bp.GaloisElementForColRotation(j), baby[j]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
