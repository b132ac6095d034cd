package lwepir

import (
	"encoding/binary"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// The wire form of a query and its answer (the device's QueryLWE): the
// LWE vector and the column as 32-bit words, little-endian; the encrypted
// secret and each hint ciphertext as their limbs' 64-bit words,
// little-endian, poly-major. Every decoder checks the exact length and that
// each coefficient lies below its modulus: the bytes come from the other
// party.

// MarshalWords is v as little-endian 32-bit words.
func MarshalWords(v []uint32) []byte {
	out := make([]byte, 4*len(v))
	for i, w := range v {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// UnmarshalWords is the inverse of MarshalWords for exactly n words.
func UnmarshalWords(b []byte, n int) ([]uint32, error) {
	if n < 0 || len(b) != 4*n {
		return nil, fmt.Errorf("%w: %d bytes for %d 32-bit words", ErrParams, len(b), n)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out, nil
}

// MarshalCiphertext is ct's limbs' words, little-endian, poly-major (the
// encrypted secret of a query, a hint ciphertext of an answer).
func MarshalCiphertext(ct *rlwe.Ciphertext) []byte {
	var n int
	for _, v := range ct.Value {
		for _, l := range v.Coeffs {
			n += 8 * len(l)
		}
	}
	out := make([]byte, 0, n)
	for _, v := range ct.Value {
		for _, l := range v.Coeffs {
			for _, c := range l {
				out = binary.LittleEndian.AppendUint64(out, c)
			}
		}
	}
	return out
}

// unmarshalCiphertext fills ct (its degree and level set) from b.
func unmarshalCiphertext(bp bgv.Parameters, ct *rlwe.Ciphertext, b []byte, what string) error {
	L, N := ct.Level()+1, bp.N()
	if len(b) != len(ct.Value)*L*N*8 {
		return fmt.Errorf("%w: %s of %d bytes, want %d", ErrParams, what, len(b), len(ct.Value)*L*N*8)
	}
	for i := range ct.Value {
		for l := 0; l < L; l++ {
			q, dst := bp.Q()[l], ct.Value[i].Coeffs[l]
			for j := range dst {
				c := binary.LittleEndian.Uint64(b)
				if c >= q {
					return fmt.Errorf("%w: %s: coefficient not below its modulus", ErrParams, what)
				}
				dst[j], b = c, b[8:]
			}
		}
	}
	return nil
}

// UnmarshalSecret rebuilds the encrypted secret of a query (NTT form, the
// top level), as the client encrypted it.
func UnmarshalSecret(p Params, b []byte) (*rlwe.Ciphertext, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	ct := bgv.NewCiphertext(bp, 1, bp.MaxLevel())
	if err := unmarshalCiphertext(bp, ct, b, "encrypted secret"); err != nil {
		return nil, err
	}
	return ct, nil
}

// UnmarshalHint rebuilds one hint ciphertext of an answer (level 0, the
// scale the server's modulus switch leaves: q_1^{-1} mod t).
func UnmarshalHint(p Params, b []byte) (*rlwe.Ciphertext, error) {
	bp, err := p.hintParams()
	if err != nil {
		return nil, err
	}
	ct := bgv.NewCiphertext(bp, 1, 0)
	if err := unmarshalCiphertext(bp, ct, b, "hint ciphertext"); err != nil {
		return nil, err
	}
	ct.Scale = bp.NewScale(1)
	for l := bp.MaxLevel(); l > 0; l-- {
		ct.Scale = ct.Scale.Div(bp.NewScale(bp.Q()[l]))
	}
	return ct, nil
}
