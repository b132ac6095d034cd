package cheetah

import "fmt"

// Presets. All satisfy the HE-standard 128-bit bound for ternary secrets
// (HomomorphicEncryption.org standard, Table 1: logN 12 → logQP ≤ 109,
// 13 → 218, 14 → 438, 15 → 881).
var (
	// PN12 is Cheetah's HomConv setting (Huang et al., USENIX Security 2022):
	// N = 4096, q = 60 + 49 bits, no special modulus. Galois keys use a
	// base-2^12 gadget (no P fits in 109 bits).
	PN12 = Literal{Name: "PN12QP109", LogN: 12, LogQ: []int{60, 49}, Base2: 12}
	// PN13 is N = 8192 with q = 60+49+49 bits and a 60-bit P (218 bits).
	PN13 = Literal{Name: "PN13QP218", LogN: 13, LogQ: []int{60, 49, 49}, LogP: []int{60}}
	// PN14 is N = 16384 with q = 60+5×59 bits and a 60-bit P (415 bits).
	PN14 = Literal{Name: "PN14QP415", LogN: 14, LogQ: []int{60, 59, 59, 59, 59, 59}, LogP: []int{60}}
	// PN15 is N = 32768 for parameter sweeps (q = 60+12×59 bits, P 60; 828 bits).
	PN15 = Literal{Name: "PN15QP828", LogN: 15, LogQ: []int{60, 59, 59, 59, 59, 59, 59, 59, 59, 59, 59, 59, 59}, LogP: []int{60}}
)

// maxLogQP is the HE-standard 128-bit bound per logN.
var maxLogQP = map[int]float64{10: 27, 11: 54, 12: 109, 13: 218, 14: 438, 15: 881, 16: 1772}

// PresetForLogN returns the preset literal for logN in 12..15.
func PresetForLogN(logN int) (Literal, error) {
	switch logN {
	case 12:
		return PN12, nil
	case 13:
		return PN13, nil
	case 14:
		return PN14, nil
	case 15:
		return PN15, nil
	}
	return Literal{}, fmt.Errorf("cheetah: no preset for logN %d", logN)
}

// Secure reports whether the parameters meet the 128-bit HE-standard bound.
func (p Parameters) Secure() bool {
	b, ok := maxLogQP[p.LogN()]
	return ok && p.LogQP() <= b
}
