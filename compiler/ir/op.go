package ir

import "fmt"

// Op names a node kind.
type Op string

// Sources and sinks.
const (
	OpInput  Op = "Input"  // ciphertext/plaintext sent by the client (lives at the host)
	OpStored Op = "Stored" // object stored on the device (database, model weights, keys)
	OpOutput Op = "Output" // result returned to the client (at the host)
)

// Homomorphic operations.
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
	OpLevelDown   Op = "LevelDown"   // drop primes without rescaling
	OpBoot        Op = "Boot"        // bootstrapping (expanded by ExpandBoot)
	OpSum         Op = "Sum"         // fold argument instances with HAdds

	// OpModRaise is the ModRaise step of bootstrapping: a level-0 ciphertext
	// is reinterpreted modulo the full chain q_0 … q_Level (INTT, lift of
	// each coefficient from q_0 to every other prime, NTT; no key switch).
	// Only compiler.ExpandBoot emits it.
	OpModRaise Op = "ModRaise"

	// OpExpand expands a one-ciphertext query into Count ciphertexts, each
	// encrypting one of its coefficients as a constant (see ExpandSpec).
	OpExpand Op = "Expand"

	// OpLWEScan is the first dimension of an LWE PIR (package fhe/lwepir):
	// the product D·q modulo 2^32 of a stored byte matrix (argument 1) and
	// a query vector (argument 0), both LWE values (Node.LWELimbs): query
	// instance i holds N words, columns [iN, (i+1)N); matrix instance i the
	// N rows × N bytes of those columns, four columns per limb. The result
	// is one limb: the N row sums. Every matrix byte costs one 32-bit
	// multiply-add (lower: isa.OpLWEMAC).
	OpLWEScan Op = "LWEScan"
)

// Ops lists the operations that lower to single mPrograms.
var Ops = []Op{OpHAdd, OpHSub, OpPMult, OpCMult, OpHMult, OpRelinearize, OpHRot, OpConjugate, OpRescale}

var allOps = []Op{OpInput, OpStored, OpOutput, OpHAdd, OpHSub, OpPMult, OpCMult, OpHMult, OpRelinearize,
	OpHRot, OpConjugate, OpRescale, OpLevelDown, OpBoot, OpSum, OpModRaise, OpExpand, OpLWEScan}

// ParseOp returns the Op with the given name.
func ParseOp(s string) (Op, error) {
	for _, o := range allOps {
		if string(o) == s {
			return o, nil
		}
	}
	return "", fmt.Errorf("ir: unknown operation %q", s)
}
