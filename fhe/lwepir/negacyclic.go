package lwepir

import (
	"github.com/tuneinsight/lattigo/v6/ring"
)

// negacyclic computes exact integer products in Z[X]/(X^N+1) through one
// 61-bit NTT prime: every product this package forms is below 2^60 in
// absolute value, so the result modulo the prime, centred, is the integer.
type negacyclic struct {
	r     *ring.Ring
	prime uint64
}

func newNegacyclic(p Params) (*negacyclic, error) {
	r, err := p.lweRing()
	if err != nil {
		return nil, err
	}
	return &negacyclic{r: r, prime: r.ModuliChain()[0]}, nil
}

// load writes signed integers into a polynomial (coefficient form),
// without a branch on their signs (v may be a secret).
func (nc *negacyclic) load(dst ring.Poly, v []int64) {
	c := dst.Coeffs[0]
	for i, x := range v {
		c[i] = uint64(x) + nc.prime&uint64(x>>63)
	}
}

// loadReversed writes d(X^{-1}) for d given by its coefficients: coefficient
// 0 stays, coefficient t moves to N−t with its sign flipped.
func (nc *negacyclic) loadReversed(dst ring.Poly, d []int64) {
	nc.load(dst, d)
	c := dst.Coeffs[0]
	n := len(c)
	for t := 1; t < n/2; t++ {
		c[t], c[n-t] = c[n-t], c[t]
	}
	for t := 1; t < n; t++ {
		if c[t] != 0 {
			c[t] = nc.prime - c[t]
		}
	}
}

// mod32 returns the centred value of a coefficient modulo 2^32: x, or
// x − prime for x above prime/2. Without a branch: a query's coefficients
// are products with its secret (a branch on their sign is a timing
// channel), and half of them would be mispredicted.
func (nc *negacyclic) mod32(x uint64) uint32 {
	above := uint32((nc.prime/2 - x) >> 63) // 1 if x > prime/2 (both below 2^62)
	return uint32(x) - uint32(nc.prime)&-above
}

func (nc *negacyclic) newPoly() ring.Poly { return nc.r.NewPoly() }
