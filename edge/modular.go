package edge

import (
	"fmt"
	"math/bits"
)

// Modulus holds one RNS prime q < 2^62 and its reduction constants.
type Modulus struct {
	Q      uint64 // the prime
	QInv   uint64 // q^-1 mod 2^64 (Montgomery reduction)
	R2     uint64 // 2^128 mod q (to enter the Montgomery domain)
	Mu     uint64 // floor(2^64 / q) (Barrett reduction of one word)
	Offset uint64 // a multiple of q ≥ 2^62, added to signed values before reduction
}

// NewModulus returns the constants of q. q must be an odd prime below 2^62.
func NewModulus(q uint64) (Modulus, error) {
	if q < 3 || q >= 1<<62 || q&1 == 0 {
		return Modulus{}, fmt.Errorf("edge: modulus %d out of range (odd, 3 ≤ q < 2^62)", q)
	}
	if !isPrime(q) {
		return Modulus{}, fmt.Errorf("edge: modulus %d is not prime", q)
	}
	m := Modulus{Q: q}
	// Newton iteration for q^-1 mod 2^64.
	inv := q
	for i := 0; i < 6; i++ {
		inv *= 2 - q*inv
	}
	m.QInv = inv
	m.Mu, _ = bits.Div64(1, 0, q) // floor(2^64/q); 1 < q so no overflow
	_, r1 := bits.Div64(0, 1<<63, q)
	r1 = addMod(r1, r1, q) // 2^64 mod q
	hi, lo := bits.Mul64(r1, r1)
	_, m.R2 = bits.Div64(hi%q, lo, q)
	k := (uint64(1)<<62 + q - 1) / q
	m.Offset = k * q
	return m, nil
}

func addMod(a, b, q uint64) uint64 {
	s := a + b
	return s - q&ctGeq(s, q)
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
	h, _ := bits.Mul64(lo*m.QInv, m.Q)
	return hi - h + m.Q
}

// MForm returns a*2^64 mod q (Montgomery form) for a < q.
func (m *Modulus) MForm(a uint64) uint64 {
	return m.MRed(a, m.R2)
}

// Reduce returns a mod q for any 64-bit a (Barrett with one word).
func (m *Modulus) Reduce(a uint64) uint64 {
	hi, _ := bits.Mul64(a, m.Mu)
	r := a - hi*m.Q // in [0, 2q)
	return condSub(r, m.Q)
}

// ReduceSigned returns a mod q in [0, q) for |a| < 2^62.
func (m *Modulus) ReduceSigned(a int64) uint64 {
	return m.Reduce(uint64(a) + m.Offset)
}

// Mul returns a*b mod q (a, b < q), not constant-time-critical setup helper.
func (m *Modulus) Mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi, lo, m.Q)
	return r
}

// Pow returns a^e mod q.
func (m *Modulus) Pow(a, e uint64) uint64 {
	r := uint64(1) % m.Q
	a %= m.Q
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = m.Mul(r, a)
		}
		a = m.Mul(a, a)
	}
	return r
}

// shoup returns floor(w*2^64/q) for w < q.
func shoup(w, q uint64) uint64 {
	s, _ := bits.Div64(w, 0, q)
	return s
}

// shoupMulLazy returns a*w mod q in [0, 2q) for any a, w < q, ws = shoup(w).
func shoupMulLazy(a, w, ws, q uint64) uint64 {
	hi, _ := bits.Mul64(a, ws)
	return a*w - hi*q
}

func mulModSlow(a, b, q uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi%q, lo, q)
	return r
}

func powModSlow(a, e, q uint64) uint64 {
	r := uint64(1) % q
	a %= q
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = mulModSlow(r, a, q)
		}
		a = mulModSlow(a, a, q)
	}
	return r
}

// isPrime is a deterministic Miller-Rabin test for 64-bit integers.
func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	small := []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
	for _, p := range small {
		if n%p == 0 {
			return n == p
		}
	}
	d, s := n-1, 0
	for d&1 == 0 {
		d >>= 1
		s++
	}
	for _, a := range small {
		x := powModSlow(a, d, n)
		if x == 1 || x == n-1 {
			continue
		}
		composite := true
		for r := 1; r < s; r++ {
			x = mulModSlow(x, x, n)
			if x == n-1 {
				composite = false
				break
			}
		}
		if composite {
			return false
		}
	}
	return true
}

// maxTrialDivisor bounds the factorisation of q-1 when searching a primitive
// root; NTT-friendly primes have q-1 = 2^k·m with small m so this is ample.
const maxTrialDivisor = 1 << 26

// primeFactors returns the distinct prime factors of n by trial division,
// stopping as soon as the remaining cofactor is prime.
func primeFactors(n uint64) ([]uint64, error) {
	var fs []uint64
	for n%2 == 0 {
		if len(fs) == 0 {
			fs = append(fs, 2)
		}
		n /= 2
	}
	prime := isPrime(n)
	for p := uint64(3); n > 1 && !prime && p*p <= n; p += 2 {
		if p > maxTrialDivisor {
			return nil, fmt.Errorf("edge: cannot factor %d by trial division", n)
		}
		if n%p == 0 {
			fs = append(fs, p)
			for n%p == 0 {
				n /= p
			}
			prime = isPrime(n)
		}
	}
	if n > 1 {
		fs = append(fs, n)
	}
	return fs, nil
}

// primitiveRoot returns the smallest primitive root g ≥ 3 of the prime q,
// the choice Lattigo's ring package makes.
func primitiveRoot(q uint64) (uint64, error) {
	fs, err := primeFactors(q - 1)
	if err != nil {
		return 0, err
	}
	for g := uint64(3); g < q; g++ {
		ok := true
		for _, f := range fs {
			if powModSlow(g, (q-1)/f, q) == 1 {
				ok = false
				break
			}
		}
		if ok {
			return g, nil
		}
	}
	return 0, fmt.Errorf("edge: no primitive root for %d", q)
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
