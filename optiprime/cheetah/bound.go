package cheetah

import (
	"math"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// Bound is a worst-case upper bound on ‖E‖∞, the noise in the phase
// (q/t)·M + E of a ciphertext. All error distributions used are bounded
// (Lattigo's discrete Gaussian is truncated at 6σ = 19.2; secrets and
// public-key masks are ternary, so ‖s‖₁, ‖u‖₁ ≤ N), so these are bounds, not
// estimates. They are pure functions of public quantities, shared by the
// real evaluator and by the counting code.
type Bound float64

// ErrBound is the truncation bound of the discrete Gaussian error.
const ErrBound = rlwe.DefaultNoiseBound

// FreshSK bounds a fresh secret-key encryption of round(q·m/t): e plus the
// encoding rounding (1/2), plus 1/2 for a server-side plaintext added to it.
func (p Parameters) FreshSK() Bound { return Bound(ErrBound + 1) }

// FreshPK bounds a public-key encryption of zero: e0 + e1·s + u·e_pk, divided
// by P with rounding when P is present.
func (p Parameters) FreshPK() Bound {
	N := float64(p.N())
	b := ErrBound * (2*N + 1)
	if p.rlwe.PCount() > 0 {
		return Bound(b/p.pProduct() + (N+1)/2)
	}
	return Bound(b)
}

func (p Parameters) pProduct() float64 {
	f := 1.0
	for _, pi := range p.rlwe.P() {
		f *= float64(pi)
	}
	return f
}

// KeySwitch bounds the noise added by one automorphism's key switching at a
// level: Σ over gadget digits of N·‖digit‖∞·19.2, divided by P (plus the
// ModDown rounding) when P is present.
func (p Parameters) KeySwitch(level int) Bound {
	N := float64(p.N())
	q := p.rlwe.Q()[:level+1]
	if p.base2 > 0 {
		digits := 0
		for _, qi := range q {
			digits += (bitLen(qi) + p.base2 - 1) / p.base2
		}
		return Bound(float64(digits) * N * math.Exp2(float64(p.base2)) * ErrBound)
	}
	nP := p.rlwe.PCount()
	s := 0.0
	for g := 0; g < len(q); g += nP {
		prod := 1.0
		for i := g; i < g+nP && i < len(q); i++ {
			prod *= float64(q[i])
		}
		s += N * prod * ErrBound
	}
	return Bound(s/p.pProduct() + (N+1)/2)
}

// MulPlain bounds the noise after multiplying by a plaintext whose centered
// coefficients have ℓ1 norm ≤ l1: ‖E·w‖∞ ≤ ‖E‖∞·‖w‖₁ in Z[X]/(X^N+1).
func MulPlain(b Bound, l1 float64) Bound {
	return Bound(float64(b) * l1)
}

// ModSwitch bounds the noise after dividing by the moduli above level 'to'
// (rounded): E/q_dropped + (1 + ‖s‖₁)/2.
func (p Parameters) ModSwitch(b Bound, from, to int) Bound {
	if to >= from {
		return b
	}
	div := 1.0
	for _, qi := range p.rlwe.Q()[to+1 : from+1] {
		div *= float64(qi)
	}
	return Bound(float64(b)/div + (float64(p.N())+1)/2)
}

// Budget is the largest noise that still decodes correctly at a level with
// t = 2^logT: q/(2t), with a 1% margin.
func (p Parameters) Budget(level, logT int) Bound {
	return Bound(math.Exp2(p.LogQAtLevel(level)-float64(logT)-1) * 0.99)
}

// Log2 returns log2 of the bound.
func (b Bound) Log2() float64 { return math.Log2(float64(b)) }
