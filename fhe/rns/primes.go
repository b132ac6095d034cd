package rns

import (
	"fmt"
	"math/big"
	"math/bits"
	"sort"
)

// IsPrime reports whether q is prime (deterministic Miller–Rabin for 64 bits).
func IsPrime(q uint64) bool {
	if q < 2 {
		return false
	}
	for _, p := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		if q%p == 0 {
			return q == p
		}
	}
	d, s := q-1, 0
	for d&1 == 0 {
		d >>= 1
		s++
	}
	for _, a := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		x := ModExp(a, d, q)
		if x == 1 || x == q-1 {
			continue
		}
		composite := true
		for r := 1; r < s; r++ {
			x = mulMod(x, x, q)
			if x == q-1 {
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

// NTTPrimesBelow returns count primes ≡ 1 mod 2^(logN+1), the largest
// below 2^bits in decreasing order: moduli whose rings of degree 2^logN
// have a negacyclic NTT, for benchmarks and tests that need such primes of
// a given size.
func NTTPrimesBelow(bits, logN, count int) ([]uint64, error) {
	step := uint64(2) << logN
	var ps []uint64
	for q := (uint64(1)<<bits-1)/step*step + 1; q > step && len(ps) < count; q -= step {
		if IsPrime(q) {
			ps = append(ps, q)
		}
	}
	if len(ps) < count {
		return nil, fmt.Errorf("rns: only %d NTT primes below 2^%d for logN=%d", len(ps), bits, logN)
	}
	return ps, nil
}

// primeFactors returns the distinct prime factors of n in increasing order.
func primeFactors(n uint64) []uint64 {
	set := map[uint64]bool{}
	var split func(n uint64)
	split = func(n uint64) {
		if n == 1 {
			return
		}
		for _, p := range []uint64{2, 3, 5, 7, 11, 13} {
			if n%p == 0 {
				set[p] = true
				for n%p == 0 {
					n /= p
				}
				split(n)
				return
			}
		}
		if IsPrime(n) {
			set[n] = true
			return
		}
		d := pollardRho(n)
		split(d)
		split(n / d)
	}
	split(n)
	out := make([]uint64, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// pollardRho returns a non-trivial factor of the odd composite n.
func pollardRho(n uint64) uint64 {
	for c := uint64(1); ; c++ {
		x, y, d := uint64(2), uint64(2), uint64(1)
		f := func(v uint64) uint64 {
			hi, lo := bits.Mul64(v, v)
			lo, carry := bits.Add64(lo, c, 0)
			hi += carry
			_, r := bits.Div64(hi%n, lo, n)
			return r
		}
		for d == 1 {
			x = f(x)
			y = f(f(y))
			diff := x - y
			if x < y {
				diff = y - x
			}
			d = new(big.Int).GCD(nil, nil, new(big.Int).SetUint64(diff), new(big.Int).SetUint64(n)).Uint64()
		}
		if d != n {
			return d
		}
	}
}

// PrimitiveRoot returns the generator Lattigo uses for Z_q^*: the smallest
// g ≥ 3 whose order is q−1. q must be prime.
func PrimitiveRoot(q uint64) (uint64, error) {
	if !IsPrime(q) {
		return 0, fmt.Errorf("rns: %d is not prime", q)
	}
	factors := primeFactors(q - 1)
	for g := uint64(3); g < q; g++ {
		ok := true
		for _, f := range factors {
			if ModExp(g, (q-1)/f, q) == 1 {
				ok = false
				break
			}
		}
		if ok {
			return g, nil
		}
	}
	return 0, fmt.Errorf("rns: no primitive root for %d", q)
}
