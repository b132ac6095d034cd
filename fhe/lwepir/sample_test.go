package lwepir

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestSampleErrorDistribution: the error sampler draws the centred binomial
// of parameter η: values within ±η, mean 0 and variance η/2 (each within
// five standard errors over 2^16 draws: a false failure once in millions of
// runs), and two draws differ; for η of one word's bits or fewer, across
// words, and at the bound.
func TestSampleErrorDistribution(t *testing.T) {
	for _, eta := range []int{2, 31, 32, 33, 82, 96, 128} {
		t.Run(fmt.Sprint(eta), func(t *testing.T) { testSampleError(t, eta) })
	}
}

func testSampleError(t *testing.T, eta int) {
	const n = 1 << 16
	e := make([]int64, n)
	if err := sampleError(e, eta); err != nil {
		t.Fatal(err)
	}
	var sum, sq float64
	for _, x := range e {
		if x < int64(-eta) || x > int64(eta) {
			t.Fatalf("sample %d outside ±%d", x, eta)
		}
		sum += float64(x)
		sq += float64(x * x)
	}
	mean := sum / n
	variance := sq/n - mean*mean
	sigma2 := float64(eta) / 2
	if se := math.Sqrt(sigma2 / n); math.Abs(mean) > 5*se {
		t.Fatalf("mean %.4f, want 0 ± %.4f", mean, 5*se)
	}
	if se := sigma2 * math.Sqrt(2.0/n); math.Abs(variance-sigma2) > 5*se {
		t.Fatalf("variance %.3f, want %.1f ± %.3f", variance, sigma2, 5*se)
	}
	again := make([]int64, n)
	if err := sampleError(again, eta); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(e, again) {
		t.Fatal("two draws are equal")
	}
}

// BenchmarkSampleError draws one 1 GiB database's query error (2^19
// columns) at the default η.
func BenchmarkSampleError(b *testing.B) {
	e := make([]int64, 1<<19)
	for b.Loop() {
		if err := sampleError(e, Default().Eta); err != nil {
			b.Fatal(err)
		}
	}
}
