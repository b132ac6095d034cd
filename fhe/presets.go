package fhe

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// Scheme names an RLWE scheme.
type Scheme string

// The schemes presets can name.
const (
	CKKS Scheme = "ckks"
	BGV  Scheme = "bgv"
)

// Preset is a named parameter set.
type Preset struct {
	Name   string
	Scheme Scheme
	LogN   int
	LogQ   []int  // bit sizes of the ciphertext primes q_0 … q_L
	LogP   []int  // bit sizes of the key-switching primes (α = len(LogP))
	T      uint64 // BGV plaintext modulus
	// LogDefaultScale is the CKKS scale (log2); 0 picks LogQ[1].
	LogDefaultScale int
	// SecretHammingWeight is the number of nonzero coefficients of a sparse
	// ternary secret; 0 means a uniform ternary secret (Lattigo's default,
	// the distribution the HE standard's table assumes).
	SecretHammingWeight int
	Source              string // where the numbers come from
}

// Insecure reports whether the preset is exempt from the security check;
// only presets whose name starts with "insecure-" are.
func (p Preset) Insecure() bool { return strings.HasPrefix(p.Name, "insecure-") }

// LogQP returns the nominal bit size of Q·P (the sum of the prime sizes,
// an upper bound on log2 QP since each prime is below 2^bits).
func (p Preset) LogQP() int {
	s := 0
	for _, b := range p.LogQ {
		s += b
	}
	for _, b := range p.LogP {
		s += b
	}
	return s
}

// Levels returns the number of levels L (primes in Q minus one).
func (p Preset) Levels() int { return len(p.LogQ) - 1 }

// DNum returns the number of key-switching digits at the top level.
func (p Preset) DNum() int {
	if len(p.LogP) == 0 {
		return 0
	}
	return (len(p.LogQ) + len(p.LogP) - 1) / len(p.LogP)
}

// heStandard128 is the largest log2(QP) with 128-bit classical security for
// a uniform ternary secret, by log2 N (HomomorphicEncryption.org standard,
// Albrecht et al. 2018, Table 1; logN 16–17 extrapolated as Lattigo does).
// Unexported so no caller can loosen the bound Check enforces.
var heStandard128 = map[int]int{10: 27, 11: 54, 12: 109, 13: 218, 14: 438, 15: 881, 16: 1761, 17: 3522}

// HEStandard128 returns the largest log2(QP) with 128-bit security at ring
// degree 2^logN, and false for a logN the standard does not cover.
func HEStandard128(logN int) (maxLogQP int, ok bool) {
	maxLogQP, ok = heStandard128[logN]
	return maxLogQP, ok
}

// Check validates the preset's shape and, unless it is named insecure-*,
// its 128-bit security.
func (p Preset) Check() error {
	if p.LogN < 4 || p.LogN > 17 {
		return fmt.Errorf("fhe: preset %s: logN %d outside [4, 17]", p.Name, p.LogN)
	}
	if len(p.LogQ) == 0 {
		return fmt.Errorf("fhe: preset %s: no ciphertext primes", p.Name)
	}
	// Two loops, no concatenation: Check runs on every Lookup, which the
	// compiler's cost model calls per node.
	for _, primes := range [2][]int{p.LogQ, p.LogP} {
		for _, b := range primes {
			if b < 20 || b > 61 {
				return fmt.Errorf("fhe: preset %s: prime size %d bits outside [20, 61]", p.Name, b)
			}
		}
	}
	switch p.Scheme {
	case CKKS:
	case BGV:
		if p.T < 2 {
			return fmt.Errorf("fhe: preset %s: BGV needs a plaintext modulus", p.Name)
		}
	default:
		return fmt.Errorf("fhe: preset %s: unknown scheme %q", p.Name, p.Scheme)
	}
	if p.Insecure() {
		return nil
	}
	bound, ok := HEStandard128(p.LogN)
	if !ok {
		return fmt.Errorf("fhe: preset %s: no 128-bit bound known for logN=%d (name it insecure-* if intended)", p.Name, p.LogN)
	}
	if p.LogQP() > bound {
		return fmt.Errorf("fhe: preset %s: logQP=%d exceeds the HE-standard 128-bit bound %d for logN=%d (name it insecure-* to use it anyway)",
			p.Name, p.LogQP(), bound, p.LogN)
	}
	return nil
}

func repeat(b, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = b
	}
	return s
}

func cat(parts ...[]int) []int {
	var s []int
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

var presets = []Preset{
	{Name: "insecure-test", Scheme: CKKS, LogN: 11, LogQ: []int{50, 40, 40, 40, 40, 40}, LogP: []int{51, 51}, LogDefaultScale: 40,
		Source: "unit tests only: small ring, dnum=3 (6 primes, α=2); NOT secure"},
	{Name: "insecure-test-bgv", Scheme: BGV, LogN: 11, LogQ: []int{50, 40, 40, 40, 40, 40}, LogP: []int{51, 51}, T: 65537,
		Source: "unit tests only: BGV twin of insecure-test; NOT secure"},
	{Name: "ckks-14", Scheme: CKKS, LogN: 14, LogQ: cat([]int{50}, repeat(40, 7)), LogP: []int{50, 50}, LogDefaultScale: 40,
		Source: "HE standard logN=14 row (logQP ≤ 438): 8 primes, α=2, dnum=4"},
	{Name: "bgv-14", Scheme: BGV, LogN: 14, LogQ: cat([]int{50}, repeat(40, 7)), LogP: []int{50, 50}, T: 65537,
		Source: "HE standard logN=14 row (logQP ≤ 438), T=2^16+1"},
	{Name: "ckks-16", Scheme: CKKS, LogN: 16, LogQ: cat([]int{49}, repeat(40, 23)), LogP: []int{49, 49, 49, 49}, LogDefaultScale: 40,
		Source: "HE standard logN=16 row (logQP ≤ 1761): 23 levels, primes < 2^50 for the 52-bit (IFMA) datapath, α=4, dnum=6"},
	{Name: "pir-bgv", Scheme: BGV, LogN: 13, LogQ: []int{54, 54, 55}, LogP: []int{55}, T: 65537,
		Source: "Rosemary §Workloads: SmartPIR BFV (N=2^13, T≈2^16) mapped to BGV with logQP=218, depth 2; N=2^13 keeps the 128-bit bound"},
	{Name: "bgv-13", Scheme: BGV, LogN: 13, LogQ: []int{49, 49, 49}, LogP: []int{49}, T: 65537,
		Source: "HE standard logN=13 row (logQP ≤ 218): 3×49-bit Q and one 49-bit P (Lattigo picks primes near 2^49, all below 2^50, the bound of the IFMA kernels), T=2^16+1; the real in-storage PIR (query expansion at level 2, scan and row product at level 1)"},
	{Name: "lwepir-hint", Scheme: BGV, LogN: 13, LogQ: []int{60, 60}, LogP: []int{61}, T: 17592186175489,
		Source: "the ring stage of the default LWE PIR (fhe/lwepir.Default: BGV N=2^13, logQP 60+60+61 = 181 ≤ 218, T = 2^44+8·16384+1), for the simulated pir-lwe workload"},
	{Name: "insecure-lwepir-hint-test", Scheme: BGV, LogN: 10, LogQ: []int{60, 60}, LogP: []int{61}, T: 2199023265793,
		Source: "unit tests only: the ring stage of fhe/lwepir.Test (N=2^10, T = 2^41+5·2048+1); NOT secure"},
	{Name: "insecure-pir-paper", Scheme: BGV, LogN: 12, LogQ: []int{54, 54, 55}, LogP: []int{55}, T: 65537,
		Source: "Rosemary §Workloads as printed (N=4096, logQP=218): exceeds the 109-bit bound for N=4096; kept only to reproduce the paper's shapes"},
	{Name: "insecure-boot-10", Scheme: CKKS, LogN: 10, LogQ: []int{60, 40, 39, 39, 39, 60, 60, 60, 60, 60, 60, 60, 60, 56, 56, 56, 56}, LogP: []int{61, 61, 61, 61}, LogDefaultScale: 40,
		Source: "unit tests only: the moduli chain of Lattigo v6's default CKKS bootstrapping at logN=10 (residual logQ [60, 40]; bootstrapping.NewParametersFromLiteral adds 3 SlotsToCoeffs, 8 EvalMod and 4 CoeffsToSlots primes and 4 special primes); NOT secure"},
	{Name: "insecure-boot-11", Scheme: CKKS, LogN: 11, LogQ: []int{60, 40, 39, 39, 39, 60, 60, 60, 60, 60, 60, 60, 60, 56, 56, 56, 56}, LogP: []int{61, 61, 61, 61}, LogDefaultScale: 40,
		Source: "unit tests only: insecure-boot-10's chain at logN=11 (Lattigo's default bootstrapping picks the same prime sizes); NOT secure"},
	{Name: "insecure-boot-12", Scheme: CKKS, LogN: 12, LogQ: []int{60, 40, 39, 39, 39, 60, 60, 60, 60, 60, 60, 60, 60, 56, 56, 56, 56}, LogP: []int{61, 61, 61, 61}, LogDefaultScale: 40,
		Source: "unit tests only: insecure-boot-10's chain at logN=12 (Lattigo's default bootstrapping picks the same prime sizes); NOT secure"},
	{Name: "hevec", Scheme: CKKS, LogN: 12, LogQ: []int{38, 33}, LogP: []int{38}, LogDefaultScale: 33,
		Source: "Rosemary §Workloads / HEVEC: N=4096, logQP=109"},
	{Name: "engorgio", Scheme: CKKS, LogN: 17, LogQ: cat([]int{60}, repeat(48, 43)), LogP: repeat(58, 24), LogDefaultScale: 48,
		Source: "Rosemary §Workloads / Engorgio: N=2^17, L=43, logQP=3516 (prime split ours: 60+43×48 | 24×58)"},
	{Name: "resnet-mpcnn", Scheme: CKKS, LogN: 16, LogQ: cat([]int{51}, repeat(46, 16), repeat(51, 14)), LogP: []int{51}, LogDefaultScale: 46,
		SecretHammingWeight: 192,
		Source:              "Lee et al. ICML'22 (FHE-MP-CNN, SEAL) and their official code: N=2^16, 31 ciphertext primes (q0 51 bits, 16 levels of 46 bits for the network, 14 of 51 bits for bootstrapping), one 51-bit special prime (one key-switching digit per prime, logQP=1552), sparse secret of Hamming weight 192"},
	{Name: "sharp", Scheme: CKKS, LogN: 16, LogQ: repeat(36, 36), LogP: repeat(36, 12), LogDefaultScale: 36,
		Source: "SHARP (Kim et al., ISCA 2023) as the HE² paper models it: N=2^16, L=35, dnum=3 (12 special primes), 36-bit words, so every prime 36 bits (logQP=1728); used to validate the host model, never executed"},
	{Name: "nexus", Scheme: CKKS, LogN: 16, LogQ: cat([]int{51}, repeat(46, 20), repeat(51, 14)), LogP: []int{58}, LogDefaultScale: 46,
		Source: "NEXUS (NDSS'25) CKKS parameters: N=2^16, q0 51 bits, 20 levels of 46 bits, 14 bootstrapping levels of 51 bits, one 58-bit special prime (logQP=1743)"},
	{Name: "insecure-test-deep", Scheme: CKKS, LogN: 12, LogQ: cat([]int{50}, repeat(40, 20)), LogP: repeat(50, 6), LogDefaultScale: 40,
		Source: "unit tests only: small ring with a 20-level chain for the small forms of the DNN and transformer workloads (no bootstrapping), α=6 for small keys; NOT secure"},
	{Name: "insecure-rise-1024", Scheme: CKKS, LogN: 10, LogQ: []int{30}, LogDefaultScale: 20,
		Source: "RISE / SEAL-Embedded: N=1024, one 30-bit prime (30 > 27-bit bound: not 128-bit secure)"},
	{Name: "rise-2048", Scheme: CKKS, LogN: 11, LogQ: []int{30}, LogDefaultScale: 20,
		Source: "RISE / SEAL-Embedded: N=2048, 1×30-bit"},
	{Name: "rise-4096", Scheme: CKKS, LogN: 12, LogQ: repeat(30, 3), LogDefaultScale: 25,
		Source: "RISE §II-D / SEAL-Embedded: N=4096, 3×30-bit (logQ=90)"},
	{Name: "rise-8192", Scheme: CKKS, LogN: 13, LogQ: repeat(30, 6), LogDefaultScale: 25,
		Source: "RISE / SEAL-Embedded: N=8192, 6×30-bit"},
	{Name: "rise-16384", Scheme: CKKS, LogN: 14, LogQ: repeat(30, 13), LogDefaultScale: 25,
		Source: "RISE §II-D: N=16384, 13×30-bit (logQ=390)"},
}

// Presets returns all presets sorted by name.
func Presets() []Preset {
	out := append([]Preset(nil), presets...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// checkedPresets indexes the presets by name with the result of their
// Check, computed once: the table is fixed at build time, and the
// compiler's cost model looks a preset up for every node it sizes.
var checkedPresets = sync.OnceValue(func() map[string]checkedPreset {
	m := make(map[string]checkedPreset, len(presets))
	for _, p := range presets {
		m[p.Name] = checkedPreset{p, p.Check()}
	}
	return m
})

type checkedPreset struct {
	p   Preset
	err error
}

// Lookup returns the named preset after checking it.
func Lookup(name string) (Preset, error) {
	if c, ok := checkedPresets()[name]; ok {
		if c.err != nil {
			return Preset{}, c.err
		}
		return c.p, nil
	}
	names := make([]string, 0, len(presets))
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("fhe: unknown preset %q (have %s)", name, strings.Join(names, ", "))
}

// CKKSParameters instantiates the preset as Lattigo CKKS parameters.
func (p Preset) CKKSParameters() (ckks.Parameters, error) {
	if err := p.Check(); err != nil {
		return ckks.Parameters{}, err
	}
	if p.Scheme != CKKS {
		return ckks.Parameters{}, fmt.Errorf("fhe: preset %s is %s, not CKKS", p.Name, p.Scheme)
	}
	scale := p.LogDefaultScale
	if scale == 0 && len(p.LogQ) > 1 {
		scale = p.LogQ[1]
	}
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN: p.LogN, LogQ: p.LogQ, LogP: p.LogP, LogDefaultScale: scale, Xs: p.secret(),
	})
	if err != nil {
		return ckks.Parameters{}, fmt.Errorf("fhe: preset %s: %w", p.Name, err)
	}
	return params, nil
}

// secret is the preset's secret distribution for Lattigo (nil: Lattigo's
// default uniform ternary).
func (p Preset) secret() ring.DistributionParameters {
	if p.SecretHammingWeight > 0 {
		return ring.Ternary{H: p.SecretHammingWeight}
	}
	return nil
}

// BGVParameters instantiates the preset as Lattigo BGV parameters.
func (p Preset) BGVParameters() (bgv.Parameters, error) {
	if err := p.Check(); err != nil {
		return bgv.Parameters{}, err
	}
	if p.Scheme != BGV {
		return bgv.Parameters{}, fmt.Errorf("fhe: preset %s is %s, not BGV", p.Name, p.Scheme)
	}
	params, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
		LogN: p.LogN, LogQ: p.LogQ, LogP: p.LogP, PlaintextModulus: p.T, Xs: p.secret(),
	})
	if err != nil {
		return bgv.Parameters{}, fmt.Errorf("fhe: preset %s: %w", p.Name, err)
	}
	return params, nil
}
