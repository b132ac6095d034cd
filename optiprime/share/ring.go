package share

import (
	"fmt"
	"math"
)

// Ring is Z_{2^ℓ}.
type Ring struct {
	bits uint
	mask uint64
}

// NewRing returns Z_{2^bits}; bits must be in [1, 64].
func NewRing(bits int) (Ring, error) {
	if bits < 1 || bits > 64 {
		return Ring{}, fmt.Errorf("share: ring bit width %d outside [1, 64]", bits)
	}
	return Ring{uint(bits), Mask(bits)}, nil
}

// Mask returns 2^bits - 1 for bits in [0, 64].
func Mask(bits int) uint64 {
	if bits >= 64 {
		return math.MaxUint64
	}
	return 1<<uint(bits) - 1
}

// Bits returns ℓ.
func (r Ring) Bits() int { return int(r.bits) }

// Mask returns 2^ℓ - 1.
func (r Ring) Mask() uint64 { return r.mask }

// Reduce returns x mod 2^ℓ.
func (r Ring) Reduce(x uint64) uint64 { return x & r.mask }

// Add returns x + y mod 2^ℓ.
func (r Ring) Add(x, y uint64) uint64 { return (x + y) & r.mask }

// Sub returns x - y mod 2^ℓ.
func (r Ring) Sub(x, y uint64) uint64 { return (x - y) & r.mask }

// Neg returns -x mod 2^ℓ.
func (r Ring) Neg(x uint64) uint64 { return (-x) & r.mask }

// Mul returns x·y mod 2^ℓ.
func (r Ring) Mul(x, y uint64) uint64 { return (x * y) & r.mask }

// MSB returns bit ℓ-1 of x (the sign bit in two's complement).
func (r Ring) MSB(x uint64) uint64 { return (x >> (r.bits - 1)) & 1 }

// MinSigned and MaxSigned bound the signed integers the ring represents.
func (r Ring) MinSigned() int64 { return -int64(1 << (r.bits - 1) & r.mask) }

// MaxSigned returns 2^{ℓ-1} - 1.
func (r Ring) MaxSigned() int64 { return int64(r.mask >> 1) }

// FromSigned maps a signed integer to its two's-complement ring element.
// Values outside [MinSigned, MaxSigned] wrap.
func (r Ring) FromSigned(v int64) uint64 { return uint64(v) & r.mask }

// ToSigned interprets x as an ℓ-bit two's-complement integer.
func (r Ring) ToSigned(x uint64) int64 {
	x &= r.mask
	if r.bits < 64 && r.MSB(x) == 1 {
		return int64(x) - int64(r.mask) - 1
	}
	return int64(x)
}

// Slice helpers. Each writes into dst, which must be at least as long as the
// inputs, and returns dst[:len(x)]; dst may alias an input.

// AddVec sets dst[i] = x[i] + y[i].
func (r Ring) AddVec(dst, x, y []uint64) []uint64 {
	dst, y = dst[:len(x)], y[:len(x)]
	for i := range x {
		dst[i] = (x[i] + y[i]) & r.mask
	}
	return dst
}

// SubVec sets dst[i] = x[i] - y[i].
func (r Ring) SubVec(dst, x, y []uint64) []uint64 {
	dst, y = dst[:len(x)], y[:len(x)]
	for i := range x {
		dst[i] = (x[i] - y[i]) & r.mask
	}
	return dst
}

// ScaleVec sets dst[i] = c·x[i].
func (r Ring) ScaleVec(dst, x []uint64, c uint64) []uint64 {
	dst = dst[:len(x)]
	for i := range x {
		dst[i] = (c * x[i]) & r.mask
	}
	return dst
}
