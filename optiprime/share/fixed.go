package share

import (
	"fmt"
	"math"
)

// Scale is the number of fractional bits of the fixed-point encoding.
const Scale = 12

// Encode returns round(v·2^scale) as a ring element. It fails on NaN, ±Inf
// and values whose encoding falls outside the signed range of the ring.
func (r Ring) Encode(v float64, scale int) (uint64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("share: cannot encode %v", v)
	}
	if scale < 0 || scale >= r.Bits() {
		return 0, fmt.Errorf("share: scale %d outside [0, %d)", scale, r.Bits())
	}
	e := math.Round(math.Ldexp(v, scale))
	if e < float64(r.MinSigned()) || e > float64(r.MaxSigned()) {
		return 0, fmt.Errorf("share: %v·2^%d = %v outside the %d-bit signed range", v, scale, e, r.Bits())
	}
	return r.FromSigned(int64(e)), nil
}

// Decode returns the real number x/2^scale, x read as signed.
func (r Ring) Decode(x uint64, scale int) float64 {
	return math.Ldexp(float64(r.ToSigned(x)), -scale)
}

// EncodeVec encodes a slice; see Encode.
func (r Ring) EncodeVec(v []float64, scale int) ([]uint64, error) {
	out := make([]uint64, len(v))
	for i, x := range v {
		e, err := r.Encode(x, scale)
		if err != nil {
			return nil, fmt.Errorf("share: element %d: %w", i, err)
		}
		out[i] = e
	}
	return out, nil
}

// DecodeVec decodes a slice; see Decode.
func (r Ring) DecodeVec(x []uint64, scale int) []float64 {
	out := make([]float64, len(x))
	for i, e := range x {
		out[i] = r.Decode(e, scale)
	}
	return out
}
