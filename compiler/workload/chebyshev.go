package workload

import (
	"math"
	"math/bits"
)

// Chebyshev is a polynomial in the Chebyshev basis on [−1, 1]:
// p(x) = Σ Coeffs[i]·T_i(x).
type Chebyshev struct{ Coeffs []float64 }

// StepChebyshev interpolates the step function (1 for x > 0, 0 for x < 0)
// at the degree+1 Chebyshev nodes, as OpenFHE's EvalChebyshevFunction
// does for the comparison Engorgio evaluates (Bian et al., "Engorgio: An
// Arbitrary-Precision Unbounded-Size Hybrid Encrypted Database via
// Quantized Fully Homomorphic Encryption", USENIX Security 2025: degree
// 495 for sorting, 247 for top-k).
func StepChebyshev(degree int) Chebyshev {
	n := degree + 1
	c := make([]float64, n)
	for k := 0; k < n; k++ {
		theta := math.Pi * (float64(k) + 0.5) / float64(n)
		f := 0.0
		if math.Cos(theta) > 0 {
			f = 1
		}
		for j := range c {
			c[j] += f * math.Cos(float64(j)*theta)
		}
	}
	for j := range c {
		c[j] *= 2 / float64(n)
	}
	c[0] /= 2
	return Chebyshev{Coeffs: c}
}

// Degree is the polynomial's degree.
func (p Chebyshev) Degree() int { return len(p.Coeffs) - 1 }

// Eval evaluates p at x by Clenshaw's recurrence (the plaintext reference).
func (p Chebyshev) Eval(x float64) float64 {
	var b1, b2 float64
	for i := len(p.Coeffs) - 1; i >= 1; i-- {
		b1, b2 = 2*x*b1-b2+p.Coeffs[i], b1
	}
	return x*b1 - b2 + p.Coeffs[0]
}

// babyLog is log2 of the baby-step count: half the bits of the degree,
// rounded up (the baby-step giant-step split of Han and Ki, CT-RSA 2020,
// and Lattigo's polynomial evaluator).
func (p Chebyshev) babyLog() int {
	m := bits.Len(uint(p.Degree()))
	return max(1, (m+1)/2)
}

// split divides p by T_m (p = q·T_m + r, deg r < m) for m ≤ deg p < 2m,
// using T_i = 2·T_{i−m}·T_m − T_{2m−i}.
func (p Chebyshev) split(m int) (q, r Chebyshev) {
	d := p.Degree()
	q.Coeffs = make([]float64, d-m+1)
	r.Coeffs = append([]float64(nil), p.Coeffs[:m]...)
	q.Coeffs[0] = p.Coeffs[m]
	for i := m + 1; i <= d; i++ {
		q.Coeffs[i-m] = 2 * p.Coeffs[i]
		r.Coeffs[2*m-i] -= p.Coeffs[i]
	}
	return q, r
}

// Depth is the multiplicative depth of the evaluation chebyshev emits.
func (p Chebyshev) Depth() int {
	return bits.Len(uint(p.Degree())) + 1
}

// one is the encrypted all-ones vector T_0 (the IR has no constant
// addition), created on first use.
func (g *gen) one() val {
	if g.ones == nil {
		o := g.input("ones", 1)
		g.ones = &o
	}
	return *g.ones
}

// chebyshev emits p(x) for a ciphertext x with values in [−1, 1]: baby
// steps T_1 … T_{2^l − 1}, giant steps T_{2^l}, T_{2^{l+1}}, …, and a
// recursive split p = q·T_{2^g} + r down to baby-sized pieces Σ c_i·T_i
// (constant multiplications, T_0 the all-ones vector); depth p.Depth().
func (g *gen) chebyshev(x val, p Chebyshev) val {
	l := p.babyLog()
	top := bits.Len(uint(p.Degree())) - 1
	t := map[int]val{0: g.one(), 1: x}
	// T_{a+b} = 2·T_a·T_b − T_{|a−b|}, a the largest power of two below i.
	var power func(i int) val
	power = func(i int) val {
		if v, ok := t[i]; ok {
			return v
		}
		a := 1 << (bits.Len(uint(i)) - 1)
		if a == i {
			a = i / 2
		}
		m := g.mul(power(a), power(i-a))
		t[i] = g.sub(g.add(m, m), power(2*a-i))
		return t[i]
	}
	for i := 2; i < 1<<l; i++ {
		power(i)
	}
	for e := l; e <= top; e++ {
		power(1 << e)
	}
	var eval func(q Chebyshev) val
	eval = func(q Chebyshev) val {
		d := q.Degree()
		if d >= 1<<l {
			m := 1 << (bits.Len(uint(d)) - 1)
			hi, lo := q.split(m)
			return g.add(g.mul(eval(hi), power(m)), eval(lo))
		}
		var acc *val
		for i, c := range q.Coeffs {
			if c == 0 && !(acc == nil && i == len(q.Coeffs)-1) {
				continue
			}
			term := g.cmul(power(i), c)
			if acc == nil {
				acc = &term
			} else {
				*acc = g.add(*acc, term)
			}
		}
		return *acc
	}
	return eval(p)
}
