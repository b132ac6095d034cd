// Package ir is the FHE program representation the compiler works on.
package ir

import "fmt"

// Op names a homomorphic operation.
type Op string

// The homomorphic operations.
const (
	OpHAdd        Op = "HAdd"        // ct + ct
	OpHSub        Op = "HSub"        // ct − ct
	OpPMult       Op = "PMult"       // ct × plaintext
	OpCMult       Op = "CMult"       // ct × constant
	OpHMult       Op = "HMult"       // ct × ct (tensor, degree 2)
	OpRelinearize Op = "Relinearize" // degree 2 → 1 with the relinearization key
	OpHRot        Op = "HRot"        // slot rotation (automorphism + key switch)
	OpConjugate   Op = "Conjugate"   // X → X^{2N−1} (+ key switch)
	OpRescale     Op = "Rescale"     // divide by the last prime
)

// Ops lists the operations that lower to single mPrograms.
var Ops = []Op{OpHAdd, OpHSub, OpPMult, OpCMult, OpHMult, OpRelinearize, OpHRot, OpConjugate, OpRescale}

// ParseOp returns the Op with the given name.
func ParseOp(s string) (Op, error) {
	for _, o := range Ops {
		if string(o) == s {
			return o, nil
		}
	}
	return "", fmt.Errorf("ir: unknown operation %q", s)
}
