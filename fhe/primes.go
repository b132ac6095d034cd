package fhe

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Primes returns deterministic NTT-friendly primes with the preset's bit
// sizes: for each size b, the largest unused prime below 2^b that is 1 mod
// 2N. Real executions use the primes Lattigo picks; these serve the
// projected (simulated) runs, where only the shapes matter, without
// instantiating Lattigo at N = 2^17.
func (p Preset) Primes() (Q, P []uint64, err error) {
	if err := p.Check(); err != nil {
		return nil, nil, err
	}
	twoN := uint64(2) << p.LogN
	used := map[uint64]bool{}
	next := func(bits int) (uint64, error) {
		top := uint64(1) << bits
		for q := top - twoN + 1; q > top>>1; q -= twoN {
			if !used[q] && rns.IsPrime(q) {
				used[q] = true
				return q, nil
			}
		}
		return 0, fmt.Errorf("fhe: preset %s: no %d-bit prime ≡ 1 mod 2N left", p.Name, bits)
	}
	for _, b := range p.LogQ {
		q, err := next(b)
		if err != nil {
			return nil, nil, err
		}
		Q = append(Q, q)
	}
	for _, b := range p.LogP {
		q, err := next(b)
		if err != nil {
			return nil, nil, err
		}
		P = append(P, q)
	}
	return Q, P, nil
}
