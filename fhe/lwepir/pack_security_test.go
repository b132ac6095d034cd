package lwepir

import (
	"math"
	"testing"
)

// primalBeta is the smallest BKZ block size of the primal (uSVP) attack on
// LWE of dimension n, modulus 2^logQ, error σ and secret σs, with the
// secret embedded and scaled (Bai and Galbraith) and the success condition
// of the "2016 estimate" (Alkim, Ducas, Pöppelmann, Schwabe; "Post-quantum
// key exchange — a new hope", USENIX Security 2016):
// σ·√β ≤ δ^(2β−d)·Vol^(1/d), minimised over the number of samples m.
func primalBeta(n int, logQ, sigma, sigmaS float64) int {
	delta := func(b float64) float64 {
		return math.Pow(math.Pow(math.Pi*b, 1/b)*b/(2*math.Pi*math.E), 1/(2*(b-1)))
	}
	best := math.MaxInt
	nu := sigma / sigmaS
	for m := 256; m <= 2*n; m += 32 {
		d := float64(n + m + 1)
		logVol := (float64(m)*logQ*math.Ln2 + float64(n)*math.Log(nu)) / d
		for b := 60; b < best; b++ {
			if math.Log(sigma*math.Sqrt(float64(b))) <= (2*float64(b)-d)*math.Log(delta(float64(b)))+logVol {
				best = b
				break
			}
		}
	}
	return best
}

// The packing keys' RLWE instance (N = 2048, the prime Q, the LWE error,
// the ternary secret of density 1/2) needs a primal attack no smaller
// than the homomorphic encryption standard's 128-bit entry at N = 2048
// (log q = 54, σ = 3.2, uniform ternary secret) under the same model: a
// guard against a parameter change that would leave the table. The
// figures (β = 344 against 337 today) are in the package doc.
func TestPackParamsNoWeakerThanStandard(t *testing.T) {
	p := Default()
	pr, err := p.packRing()
	if err != nil {
		t.Fatal(err)
	}
	ours := primalBeta(p.N(), math.Log2(float64(pr.q)), math.Sqrt(float64(p.Eta)/2), math.Sqrt(0.5))
	standard := primalBeta(2048, 54, 3.2, math.Sqrt(2.0/3))
	t.Logf("primal uSVP block size: packing keys β = %d, standard's 128-bit entry β = %d", ours, standard)
	if ours < standard {
		t.Fatalf("the packing keys need β = %d, below the standard's %d", ours, standard)
	}
}
