package lwepir

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// The device carries values as instances of 64-bit words (the stream
// programs' format). These pack the scheme's values into that form.

// PackWords packs 32-bit entries two per word (low half first) into
// instances of n words, the last zero-padded.
func PackWords(v []uint32, n int) [][]uint64 {
	count := (len(v)/2 + n - 1) / n
	out := make([][]uint64, count)
	for k := range out {
		out[k] = make([]uint64, n)
	}
	for i := 0; i < len(v); i += 2 {
		w := uint64(v[i])
		if i+1 < len(v) {
			w |= uint64(v[i+1]) << 32
		}
		out[i/2/n][i/2%n] = w
	}
	return out
}

// UnpackWords is the inverse of PackWords for entries entries.
func UnpackWords(inst [][]uint64, entries int) ([]uint32, error) {
	if len(inst) == 0 {
		return nil, fmt.Errorf("%w: no words", ErrParams)
	}
	n := len(inst[0])
	if n == 0 || len(inst) != (entries/2+n-1)/n {
		return nil, fmt.Errorf("%w: %d instances for %d entries", ErrParams, len(inst), entries)
	}
	out := make([]uint32, entries)
	for i := range out {
		w := inst[i/2/n]
		if len(w) != n {
			return nil, fmt.Errorf("%w: instance of %d words, want %d", ErrParams, len(w), n)
		}
		out[i] = uint32(w[i/2%n] >> (32 * (i % 2)))
	}
	return out, nil
}

// SecretFromLimbs rebuilds the encrypted secret of a query from its limbs
// (poly-major: c0 limbs then c1 limbs, NTT form), as the client encrypted it.
func SecretFromLimbs(p Params, limbs [][]uint64) (*rlwe.Ciphertext, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	L := bp.MaxLevel() + 1
	if len(limbs) != 2*L {
		return nil, fmt.Errorf("%w: encrypted secret of %d limbs, want %d", ErrParams, len(limbs), 2*L)
	}
	ct := bgv.NewCiphertext(bp, 1, bp.MaxLevel())
	for i := range ct.Value {
		for l := 0; l < L; l++ {
			src := limbs[i*L+l]
			if len(src) != bp.N() {
				return nil, fmt.Errorf("%w: limb of %d coefficients", ErrParams, len(src))
			}
			q := bp.Q()[l]
			for _, c := range src {
				if c >= q {
					return nil, fmt.Errorf("%w: coefficient not below its modulus", ErrParams)
				}
			}
			copy(ct.Value[i].Coeffs[l], src)
		}
	}
	return ct, nil
}

// Limbs returns a ciphertext's limbs poly-major (shared, not copied).
func Limbs(ct *rlwe.Ciphertext) [][]uint64 {
	var out [][]uint64
	for _, v := range ct.Value {
		out = append(out, v.Coeffs...)
	}
	return out
}

// HintFromLimbs rebuilds one hint ciphertext of an answer (level 0, the
// scale the server's modulus switch leaves: q_1^{-1} mod t).
func HintFromLimbs(p Params, limbs [][]uint64) (*rlwe.Ciphertext, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	if len(limbs) != 2 || len(limbs[0]) != bp.N() || len(limbs[1]) != bp.N() {
		return nil, fmt.Errorf("%w: hint ciphertext of the wrong shape", ErrParams)
	}
	ct := bgv.NewCiphertext(bp, 1, 0)
	for i := range ct.Value {
		for _, c := range limbs[i] {
			if c >= bp.Q()[0] {
				return nil, fmt.Errorf("%w: coefficient not below its modulus", ErrParams)
			}
		}
		copy(ct.Value[i].Coeffs[0], limbs[i])
	}
	ct.Scale = bp.NewScale(1)
	for l := bp.MaxLevel(); l > 0; l-- {
		ct.Scale = ct.Scale.Div(bp.NewScale(bp.Q()[l]))
	}
	return ct, nil
}
