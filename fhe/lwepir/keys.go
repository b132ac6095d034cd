package lwepir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// SecretKey is the client's key of the ring stage. It never leaves the client.
type SecretKey struct {
	sk *rlwe.SecretKey
}

// EvalKeys are the Galois keys the server needs to evaluate H on an
// encrypted s: one per column rotation of the shape's Layout. They are
// public and uploaded once per client and database shape.
type EvalKeys struct {
	Rotations map[int]*rlwe.GaloisKey
}

// GenerateKeys makes a fresh secret key and the evaluation keys of shape.
func GenerateKeys(p Params, shape Shape) (*SecretKey, *EvalKeys, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, nil, err
	}
	sk := &SecretKey{sk: rlwe.NewKeyGenerator(bp).GenSecretKeyNew()}
	evk, err := sk.EvalKeys(p, shape.Layout(p).Rotations())
	return sk, evk, err
}

// DeriveSecretKey makes the secret key a 32-byte seed determines (a client
// derives the seed from its data key, so it keeps no other key file). The
// ternary coefficients come from Lattigo's keyed PRNG (BLAKE2b-based).
func DeriveSecretKey(p Params, seed []byte) (*SecretKey, error) {
	if len(seed) < 32 {
		return nil, fmt.Errorf("%w: key seed of %d bytes", ErrParams, len(seed))
	}
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	prng, err := sampling.NewKeyedPRNG(seed)
	if err != nil {
		return nil, err
	}
	sampler, err := ring.NewSampler(prng, bp.RingQ(), bp.Xs(), false)
	if err != nil {
		return nil, err
	}
	sk := rlwe.NewSecretKey(bp)
	sampler.Read(sk.Value.Q)
	rqp := bp.RingQP()
	rqp.ExtendBasisSmallNormAndCenter(sk.Value.Q, bp.MaxLevelP(), sk.Value.Q, sk.Value.P)
	rqp.NTT(sk.Value, sk.Value)
	rqp.MForm(sk.Value, sk.Value)
	return &SecretKey{sk: sk}, nil
}

// EvalKeys generates the Galois keys of sk for the given column rotations
// (fresh randomness each call).
func (sk *SecretKey) EvalKeys(p Params, rotations []int) (*EvalKeys, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	kg := rlwe.NewKeyGenerator(bp)
	evk := &EvalKeys{Rotations: map[int]*rlwe.GaloisKey{}}
	for _, r := range rotations {
		evk.Rotations[r] = kg.GenGaloisKeyNew(bp.GaloisElementForColRotation(r), sk.sk)
	}
	return evk, nil
}

// Fingerprint names sk without revealing it: the first 8 bytes of SHA-256
// over its encoding, hex. Evaluation keys are stored under it, so keys of
// one secret are never paired with another's query.
func (sk *SecretKey) Fingerprint() (string, error) {
	b, err := sk.sk.MarshalBinary()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte("rosemary lwepir key fingerprint\x00"), b...))
	return hex.EncodeToString(sum[:8]), nil
}

// MarshalGaloisKey encodes one evaluation key for storage.
func MarshalGaloisKey(k *rlwe.GaloisKey) ([]byte, error) { return k.MarshalBinary() }

// GaloisKeyBytes is the size of an encoded Galois key of p.
func GaloisKeyBytes(p Params) int {
	bp, err := p.hintParams()
	if err != nil {
		return 0
	}
	return rlwe.NewGaloisKey(bp).BinarySize()
}

// UnmarshalGaloisKey decodes a stored evaluation key, refusing any input
// whose size is not that of a key of p before decoding it.
func UnmarshalGaloisKey(p Params, b []byte) (*rlwe.GaloisKey, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	want := rlwe.NewGaloisKey(bp)
	if len(b) != want.BinarySize() {
		return nil, fmt.Errorf("%w: Galois key of %d bytes, want %d", ErrParams, len(b), want.BinarySize())
	}
	if err := want.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: Galois key: %w", ErrParams, err)
	}
	return want, nil
}

// check verifies keys received from a client belong to p's ring and rotate by
// the steps the evaluation uses.
func (k *EvalKeys) check(bp bgv.Parameters, rotations []int) error {
	if k == nil {
		return fmt.Errorf("%w: missing Galois keys", ErrParams)
	}
	tmpl := rlwe.NewGaloisKey(bp)
	for _, r := range rotations {
		g := k.Rotations[r]
		if g == nil {
			return fmt.Errorf("%w: no Galois key for a rotation by %d", ErrParams, r)
		}
		if g.GaloisElement != bp.GaloisElementForColRotation(r) {
			return fmt.Errorf("%w: the key of the rotation by %d rotates otherwise", ErrParams, r)
		}
		if g.NthRoot != bp.RingQ().NthRoot() || g.LevelQ() != bp.MaxLevelQ() || g.LevelP() != bp.MaxLevelP() {
			return fmt.Errorf("%w: Galois keys at the wrong levels", ErrParams)
		}
		if g.BaseRNSDecompositionVectorSize() != tmpl.BaseRNSDecompositionVectorSize() ||
			fmt.Sprint(g.BaseTwoDecompositionVectorSize()) != fmt.Sprint(tmpl.BaseTwoDecompositionVectorSize()) {
			return fmt.Errorf("%w: Galois keys of the wrong decomposition", ErrParams)
		}
		for _, row := range g.Value {
			for _, el := range row {
				for _, p := range el {
					if p.Q.N() != bp.N() || p.Q.Level() != bp.MaxLevelQ() || p.P.Level() != bp.MaxLevelP() {
						return fmt.Errorf("%w: Galois key polynomials of the wrong shape", ErrParams)
					}
				}
			}
		}
	}
	return nil
}

func (k *EvalKeys) set() *rlwe.MemEvaluationKeySet {
	var gks []*rlwe.GaloisKey
	for _, g := range k.Rotations {
		gks = append(gks, g)
	}
	return rlwe.NewMemEvaluationKeySet(nil, gks...)
}
