package fhe

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

func TestEveryPresetChecks(t *testing.T) {
	for _, p := range Presets() {
		if err := p.Check(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.Source == "" {
			t.Errorf("%s: no source", p.Name)
		}
		if bound, ok := HEStandard128(p.LogN); !p.Insecure() && (!ok || p.LogQP() > bound) {
			t.Errorf("%s: logQP %d over the bound", p.Name, p.LogQP())
		}
	}
}

func TestPaperShapes(t *testing.T) {
	cases := []struct {
		name        string
		logN, logQP int
	}{
		{"insecure-pir-paper", 12, 218}, {"pir-bgv", 13, 218}, {"hevec", 12, 109}, {"engorgio", 17, 3516},
		{"rise-4096", 12, 90}, {"rise-16384", 14, 390},
	}
	for _, c := range cases {
		p, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.LogN != c.logN || p.LogQP() != c.logQP {
			t.Errorf("%s: logN=%d logQP=%d, want %d, %d", c.name, p.LogN, p.LogQP(), c.logN, c.logQP)
		}
	}
	e, _ := Lookup("engorgio")
	if e.Levels() != 43 {
		t.Errorf("engorgio L=%d, want 43", e.Levels())
	}
	p, _ := Lookup("insecure-test")
	if p.DNum() < 3 {
		t.Errorf("insecure-test dnum=%d, want ≥ 3", p.DNum())
	}
}

func TestOverBoundIsRefused(t *testing.T) {
	p := Preset{Name: "too-big", Scheme: CKKS, LogN: 12, LogQ: []int{60, 60}, Source: "test"}
	err := p.Check()
	if err == nil || !strings.Contains(err.Error(), "exceeds the HE-standard 128-bit bound 109") {
		t.Fatalf("want a clear refusal, got %v", err)
	}
	p.Name = "insecure-too-big"
	if err := p.Check(); err != nil {
		t.Fatalf("insecure preset refused: %v", err)
	}
	if _, err := Lookup("nope"); err == nil {
		t.Fatal("unknown preset accepted")
	}
	// The bound is read through a function: the table cannot be loosened.
	if b, ok := HEStandard128(14); !ok || b != 438 {
		t.Errorf("HEStandard128(14) = %d, %v; want 438 (Albrecht et al. Table 1)", b, ok)
	}
	if _, ok := HEStandard128(9); ok {
		t.Error("HEStandard128(9) claims a bound the standard does not give")
	}
	p = Preset{Name: "small", Scheme: CKKS, LogN: 9, LogQ: []int{30}, Source: "test"}
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "no 128-bit bound known for logN=9") {
		t.Errorf("logN 9 without a bound: %v", err)
	}
}

func TestLattigoParameters(t *testing.T) {
	for _, name := range []string{"insecure-test", "ckks-14", "hevec", "rise-4096"} {
		p, _ := Lookup(name)
		params, err := p.CKKSParameters()
		if err != nil {
			t.Fatal(err)
		}
		if params.LogN() != p.LogN || params.MaxLevel() != p.Levels() {
			t.Fatalf("%s: Lattigo logN=%d L=%d", name, params.LogN(), params.MaxLevel())
		}
		if bound, ok := HEStandard128(p.LogN); !p.Insecure() && (!ok || math.Ceil(params.LogQP()) > float64(bound)) {
			t.Fatalf("%s: real logQP %.1f over bound", name, params.LogQP())
		}
	}
	for _, name := range []string{"insecure-test-bgv", "bgv-14", "pir-bgv"} {
		p, _ := Lookup(name)
		params, err := p.BGVParameters()
		if err != nil {
			t.Fatal(err)
		}
		if params.PlaintextModulus() != p.T {
			t.Fatalf("%s: T=%d", name, params.PlaintextModulus())
		}
	}
}

func TestPrimesAreNTTFriendlyAndDistinct(t *testing.T) {
	for _, name := range []string{"engorgio", "ckks-16", "pir-bgv"} {
		p, _ := Lookup(name)
		Q, P, err := p.Primes()
		if err != nil {
			t.Fatal(err)
		}
		if len(Q) != len(p.LogQ) || len(P) != len(p.LogP) {
			t.Fatalf("%s: %d+%d primes", name, len(Q), len(P))
		}
		seen := map[uint64]bool{}
		for i, q := range append(append([]uint64(nil), Q...), P...) {
			want := append(append([]int(nil), p.LogQ...), p.LogP...)[i]
			if seen[q] || q%(uint64(2)<<p.LogN) != 1 || q>>(want-1) != 1 || !new(big.Int).SetUint64(q).ProbablyPrime(20) {
				t.Fatalf("%s: prime %d (%d) bad", name, i, q)
			}
			seen[q] = true
		}
	}
}

// The ResNet preset keeps Lee et al.'s sparse secret (Hamming weight 192):
// Lattigo is asked for it, and a preset without a weight keeps Lattigo's
// uniform ternary default.
func TestSparseSecret(t *testing.T) {
	p, err := Lookup("resnet-mpcnn")
	if err != nil {
		t.Fatal(err)
	}
	if p.SecretHammingWeight != 192 || p.secret() != (ring.Ternary{H: 192}) {
		t.Fatalf("resnet-mpcnn secret %v, want Hamming weight 192", p.secret())
	}
	small := Preset{Name: "insecure-sparse", Scheme: CKKS, LogN: 10, LogQ: []int{40, 30}, LogP: []int{40}, SecretHammingWeight: 32}
	params, err := small.CKKSParameters()
	if err != nil {
		t.Fatal(err)
	}
	if params.Xs() != (ring.Ternary{H: 32}) {
		t.Fatalf("Lattigo parameters have secret %v, want Hamming weight 32", params.Xs())
	}
	def, err := Lookup("ckks-14")
	if err != nil {
		t.Fatal(err)
	}
	dp, err := def.CKKSParameters()
	if err != nil {
		t.Fatal(err)
	}
	if dp.Xs() != rlwe.DefaultXs {
		t.Fatalf("ckks-14 secret %v, want Lattigo's uniform ternary default", dp.Xs())
	}
}
