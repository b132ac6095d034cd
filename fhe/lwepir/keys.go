package lwepir

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// SecretKey is the client's key of the ring stage. It never leaves the client.
type SecretKey struct {
	sk *rlwe.SecretKey
}

// EvalKeys are the two Galois keys the server needs to evaluate H on an
// encrypted s: column rotations by 1 (baby steps) and by b1 (giant steps).
// They are public and uploaded once per client.
type EvalKeys struct {
	Rot1, RotGiant *rlwe.GaloisKey
}

// GenerateKeys makes a client's secret key and the evaluation keys it uploads.
func GenerateKeys(p Params) (*SecretKey, *EvalKeys, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, nil, err
	}
	kg := rlwe.NewKeyGenerator(bp)
	sk := kg.GenSecretKeyNew()
	b1, _ := p.babyGiant()
	gks := kg.GenGaloisKeysNew([]uint64{bp.GaloisElementForColRotation(1), bp.GaloisElementForColRotation(b1)}, sk)
	return &SecretKey{sk: sk}, &EvalKeys{Rot1: gks[0], RotGiant: gks[1]}, nil
}

// check verifies keys received from a client belong to p's ring and rotate by
// the steps the evaluation uses.
func (k *EvalKeys) check(bp bgv.Parameters, b1 int) error {
	if k == nil || k.Rot1 == nil || k.RotGiant == nil {
		return fmt.Errorf("%w: missing Galois keys", ErrParams)
	}
	if k.Rot1.GaloisElement != bp.GaloisElementForColRotation(1) || k.RotGiant.GaloisElement != bp.GaloisElementForColRotation(b1) {
		return fmt.Errorf("%w: Galois keys for the wrong rotations", ErrParams)
	}
	if k.Rot1.LevelQ() != bp.MaxLevelQ() || k.RotGiant.LevelQ() != bp.MaxLevelQ() ||
		k.Rot1.LevelP() != bp.MaxLevelP() || k.RotGiant.LevelP() != bp.MaxLevelP() {
		return fmt.Errorf("%w: Galois keys at the wrong levels", ErrParams)
	}
	return nil
}

func (k *EvalKeys) set() *rlwe.MemEvaluationKeySet {
	return rlwe.NewMemEvaluationKeySet(nil, k.Rot1, k.RotGiant)
}
