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

// roundQuery rounds each word of v to its high bits bits (to the nearest
// multiple of 2^(32−bits), modulo 2^32). The rounding is a public function
// of the LWE samples, so it shows nothing they do not; it adds an error
// uniform in [−2^(31−bits), 2^(31−bits)) a column to the scan's noise
// (fhe/lwepir's package doc).
func roundQuery(v []uint32, bits int) {
	if bits >= 32 {
		return
	}
	shift := uint(32 - bits)
	half := uint32(1) << (shift - 1)
	for i, w := range v {
		v[i] = (w + half) >> shift << shift
	}
}

// QueryBytes is the wire size of a packed query vector of n words under p:
// 4 bytes a word, or QueryBits bits a word bit-packed (28: 7 bytes a pair).
func QueryBytes(p Params, n int) int {
	if p.Pack().QueryBits == 28 {
		return (7*n + 1) / 2
	}
	return 4 * n
}

// MarshalQuery is the wire form of a packed query's vector under p: 32-bit
// words (MarshalWords), or for 28-bit query words each word's high 28 bits,
// two words to 7 bytes, little-endian (the words must be rounded to them,
// as PackedQuery's are).
func MarshalQuery(p Params, v []uint32) []byte {
	if p.Pack().QueryBits != 28 {
		return MarshalWords(v)
	}
	out := make([]byte, QueryBytes(p, len(v))+1) // one spare byte for the last pair's 8-byte store
	i := 0
	for ; i+1 < len(v); i += 2 {
		x := uint64(v[i]>>4) | uint64(v[i+1]>>4)<<28
		binary.LittleEndian.PutUint64(out[7*(i/2):], x)
	}
	if i < len(v) {
		binary.LittleEndian.PutUint32(out[7*(i/2):], v[i]>>4)
	}
	return out[:QueryBytes(p, len(v))]
}

// UnmarshalQuery is the inverse of MarshalQuery for exactly n words; for
// 28-bit words, an odd count's last half-byte must be zero.
func UnmarshalQuery(p Params, b []byte, n int) ([]uint32, error) {
	if p.Pack().QueryBits != 28 {
		return UnmarshalWords(b, n)
	}
	if n < 0 || len(b) != QueryBytes(p, n) {
		return nil, fmt.Errorf("%w: %d bytes for %d 28-bit words", ErrParams, len(b), n)
	}
	out := make([]uint32, n)
	var buf [8]byte
	i := 0
	// Two words a 7-byte chunk, read as the low 56 bits of a 64-bit load
	// while one more byte follows it (the last chunk through a copy).
	for o := 0; i+1 < n && o+8 <= len(b); i, o = i+2, o+7 {
		x := binary.LittleEndian.Uint64(b[o : o+8])
		out[i], out[i+1] = uint32(x&(1<<28-1))<<4, uint32(x>>28&(1<<28-1))<<4
	}
	for ; i+1 < n; i += 2 {
		chunk := b[7*(i/2) : 7*(i/2)+7]
		copy(buf[:], chunk)
		buf[7] = 0
		x := binary.LittleEndian.Uint64(buf[:])
		out[i], out[i+1] = uint32(x&(1<<28-1))<<4, uint32(x>>28)<<4
	}
	if i < n {
		rest := b[7*(i/2):]
		var w [4]byte
		copy(w[:], rest)
		x := binary.LittleEndian.Uint32(w[:])
		if x>>28 != 0 {
			return nil, fmt.Errorf("%w: a 28-bit query word's padding is not zero", ErrParams)
		}
		out[i] = x << 4
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
