package edge

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Modulus is one RNS prime q < 2^62: rns's constants (Montgomery, Barrett,
// 2^128 mod q) plus an offset for signed values, with the reductions the
// encryptor applies to secret-dependent values. MRed, MForm and Reduce
// shadow rns.Modulus's with branch-free forms (same results): rns's may
// compile to a branch, and on the RISC-V target a branch on a secret would
// leak it.
type Modulus struct {
	rns.Modulus
	Offset uint64 // a multiple of q ≥ 2^62, added to signed values before reduction
}

// NewModulus returns the constants of q. q must be an odd prime below 2^62.
func NewModulus(q uint64) (Modulus, error) {
	if q < 3 || q >= 1<<62 || q&1 == 0 {
		return Modulus{}, fmt.Errorf("edge: modulus %d out of range (odd, 3 ≤ q < 2^62)", q)
	}
	if !rns.IsPrime(q) {
		return Modulus{}, fmt.Errorf("edge: modulus %d is not prime", q)
	}
	rm, err := rns.NewModulus(q)
	if err != nil {
		return Modulus{}, fmt.Errorf("edge: %w", err)
	}
	k := (uint64(1)<<62 + q - 1) / q
	return Modulus{Modulus: rm, Offset: k * q}, nil
}

// ctGeq returns all ones if a ≥ b and zero otherwise, without branching
// (a, b < 2^63).
func ctGeq(a, b uint64) uint64 {
	return ((a - b) >> 63) - 1
}

// condSub returns a-q if a ≥ q else a (a < 2^63), without branching.
func condSub(a, q uint64) uint64 {
	t := a - q
	return t + q&-(t>>63)
}

// MRed returns x*y*2^-64 mod q in [0, q); x*y must be below q*2^64.
func (m *Modulus) MRed(x, y uint64) uint64 {
	return condSub(m.mredLazy(x, y), m.Q)
}

// mredLazy returns x*y*2^-64 mod q in (0, 2q); x*y < q*2^64.
func (m *Modulus) mredLazy(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	h, _ := bits.Mul64(lo*m.MRedConst, m.Q)
	return hi - h + m.Q
}

// MForm returns a*2^64 mod q (Montgomery form) for a < q.
func (m *Modulus) MForm(a uint64) uint64 {
	return m.MRed(a, m.R2)
}

// Reduce returns a mod q for any 64-bit a (Barrett with one word,
// floor(2^64/q) = the high word of rns's floor(2^128/q)).
func (m *Modulus) Reduce(a uint64) uint64 {
	hi, _ := bits.Mul64(a, m.BRedConst[0])
	r := a - hi*m.Q // in [0, 2q)
	return condSub(r, m.Q)
}

// ReduceSigned returns a mod q in [0, q) for |a| < 2^62.
func (m *Modulus) ReduceSigned(a int64) uint64 {
	return m.Reduce(uint64(a) + m.Offset)
}

// small30 bounds the primes for which 32-bit Montgomery products are used
// in pointwise multiplication (every product of two reduced values < 2^60).
const small30 = 1 << 30

// mred32 returns x·y·2^-32 mod q in (0, 2q) for x·y < q·2^32; qInv holds
// q^-1 mod 2^32 in its low half. Only 64-bit multiplications are needed.
func mred32(x, y, q, qInv uint64) uint64 {
	p := x * y
	t := uint64(uint32(p) * uint32(qInv))
	return p>>32 + q - (t*q)>>32
}
