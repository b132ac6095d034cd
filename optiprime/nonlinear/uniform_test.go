package nonlinear

import (
	"math"
	"testing"
)

// chiSquare returns the chi-square statistic of the histogram of the given
// bit field of xs against the uniform distribution on 2^width values.
func chiSquare(xs []uint64, shift, width int) float64 {
	bins := make([]float64, 1<<width)
	for _, x := range xs {
		bins[x>>shift&(1<<width-1)]++
	}
	exp := float64(len(xs)) / float64(len(bins))
	var c float64
	for _, o := range bins {
		c += (o - exp) * (o - exp) / exp
	}
	return c
}

// chiCritical is the upper critical value of chi-square with k degrees of
// freedom at one-sided normal quantile z (Wilson–Hilferty approximation).
func chiCritical(k, z float64) float64 {
	a := 2 / (9 * k)
	return k * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// TestOutputShareUniform checks that each party's ReLU and truncation output
// shares are uniform, whatever the inputs: the same fixed inputs are run many
// times and the low and high 8 bits of one party's shares are binned. The
// statistic must stay under the p = 10^-6 critical value (≈ 377 for 255
// degrees of freedom), so a correct implementation fails about once in a
// million runs. The same statistic on the reconstructed outputs, which are
// far from uniform, must exceed it: the test can see a leak.
func TestOutputShareUniform(t *testing.T) {
	const n, runs, l = 4096, 4, 37
	p0, p1 := pair(t, l)
	g := testPRG(t)
	r := p0.Ring()
	// Fixed, structured inputs: a ramp of small signed values around 0.
	x := make([]uint64, n)
	for i := range x {
		x[i] = r.FromSigned(int64(i%64) - 32)
	}
	crit := chiCritical(255, 4.753) // z for one-sided p = 1e-6
	var relu0, relu1, tr0, tr1, plain []uint64
	for k := 0; k < runs; k++ {
		// The input shares themselves are fresh each run, as they would be
		// coming out of the previous layer.
		x0, x1 := r.Split(g, x)
		y0, y1 := both(t, func() ([]uint64, error) { return p0.ReLU(x0) }, func() ([]uint64, error) { return p1.ReLU(x1) })
		z0, z1 := both(t, func() ([]uint64, error) { return p0.Truncate(x0, 12) }, func() ([]uint64, error) { return p1.Truncate(x1, 12) })
		relu0, relu1 = append(relu0, y0...), append(relu1, y1...)
		tr0, tr1 = append(tr0, z0...), append(tr1, z1...)
		y, _ := r.Reconstruct(y0, y1)
		plain = append(plain, y...)
	}
	for name, s := range map[string][]uint64{"server ReLU share": relu0, "client ReLU share": relu1, "server trunc share": tr0, "client trunc share": tr1} {
		for _, shift := range []int{0, l - 8} {
			if c := chiSquare(s, shift, 8); c > crit {
				t.Errorf("%s, bits %d..%d: chi-square %.1f > %.1f", name, shift, shift+7, c, crit)
			}
		}
	}
	if c := chiSquare(plain, 0, 8); c <= crit {
		t.Errorf("chi-square of the plaintext outputs %.1f does not exceed %.1f: the test has no power", c, crit)
	}
}

// TestComparisonShareBalanced: a party's boolean share of a comparison is an
// unbiased coin whatever the result (here the result is always 1).
func TestComparisonShareBalanced(t *testing.T) {
	const n = 20000
	p0, p1 := pair(t, 37)
	a, b := make([]uint64, n), make([]uint64, n)
	for i := range a {
		a[i], b[i] = 1000, 999
	}
	s0, s1 := both(t, func() ([]uint8, error) { return p0.Millionaires(a, 36) }, func() ([]uint8, error) { return p1.Millionaires(b, 36) })
	ones := 0
	for i := range s0 {
		if s0[i]^s1[i] != 1 {
			t.Fatal("wrong comparison")
		}
		ones += int(s0[i])
	}
	// Binomial(20000, 1/2): sd ≈ 71; 6 sd bound.
	if ones < n/2-425 || ones > n/2+425 {
		t.Errorf("server share is 1 in %d of %d comparisons", ones, n)
	}
}
