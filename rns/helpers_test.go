package rns

import "fmt"

// primesBelow returns count primes ≡ 1 mod 2^(logN+1), the largest below 2^bits.
func primesBelow(bits, logN, count int) ([]uint64, error) {
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
