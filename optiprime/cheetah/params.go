package cheetah

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// MaxLogT is the largest supported plaintext modulus exponent.
const MaxLogT = 45

// Parameters are the RLWE parameters of the scheme. The plaintext modulus is
// not part of them: every encode/decode call names its own t = 2^logT, since
// the protocols use t' = 2^(ℓ+r) for some layers with the same keys.
type Parameters struct {
	rlwe  rlwe.Parameters
	base2 int // base-two gadget decomposition of Galois keys (0: RNS only)
	name  string
}

// Literal describes a parameter set.
type Literal struct {
	Name  string
	LogN  int
	LogQ  []int // ciphertext moduli bit sizes, Q[0] first (the output level)
	LogP  []int // key-switching special moduli (may be empty)
	Base2 int   // base-two decomposition for Galois keys when LogP is empty
}

// NewParameters builds parameters from a literal. Ciphertexts are kept in
// the NTT domain (Lattigo's NTTFlag).
func NewParameters(lit Literal) (Parameters, error) {
	if lit.LogN < 10 || lit.LogN > 16 {
		return Parameters{}, fmt.Errorf("cheetah: logN %d outside [10,16]", lit.LogN)
	}
	if len(lit.LogQ) == 0 {
		return Parameters{}, fmt.Errorf("cheetah: no ciphertext modulus")
	}
	for _, b := range lit.LogQ {
		if b < MaxLogT+4 || b > 61 {
			return Parameters{}, fmt.Errorf("cheetah: modulus of %d bits outside [%d,61]", b, MaxLogT+4)
		}
	}
	if len(lit.LogP) == 0 && (lit.Base2 <= 0 || lit.Base2 > 60) {
		return Parameters{}, fmt.Errorf("cheetah: without P a base-two decomposition in [1,60] is required, got %d", lit.Base2)
	}
	p, err := rlwe.NewParametersFromLiteral(rlwe.ParametersLiteral{
		LogN:    lit.LogN,
		LogQ:    lit.LogQ,
		LogP:    lit.LogP,
		Xe:      rlwe.DefaultXe,
		Xs:      rlwe.DefaultXs,
		NTTFlag: true,
	})
	if err != nil {
		return Parameters{}, fmt.Errorf("cheetah: rlwe parameters: %w", err)
	}
	b2 := 0
	if len(lit.LogP) == 0 {
		b2 = lit.Base2
	}
	return Parameters{rlwe: p, base2: b2, name: lit.Name}, nil
}

// RLWE returns the underlying Lattigo parameters.
func (p Parameters) RLWE() rlwe.Parameters { return p.rlwe }

// Name of the preset (may be empty).
func (p Parameters) Name() string { return p.name }

// N is the ring degree.
func (p Parameters) N() int { return p.rlwe.N() }

// LogN is log2 of the ring degree.
func (p Parameters) LogN() int { return p.rlwe.LogN() }

// MaxLevel is the top ciphertext level (number of Q moduli minus one).
func (p Parameters) MaxLevel() int { return p.rlwe.MaxLevel() }

// LogQP is the total modulus size in bits (for the security check).
func (p Parameters) LogQP() float64 { return p.rlwe.LogQP() }

// QiBits returns the bit length of each ciphertext modulus.
func (p Parameters) QiBits() []int {
	q := p.rlwe.Q()
	out := make([]int, len(q))
	for i, qi := range q {
		out[i] = bitLen(qi)
	}
	return out
}

// RingQ returns the ciphertext ring.
func (p Parameters) RingQ() *ring.Ring { return p.rlwe.RingQ() }

// evkParams are the evaluation-key parameters used for every Galois key.
func (p Parameters) evkParams() rlwe.EvaluationKeyParameters {
	if p.base2 == 0 {
		return rlwe.EvaluationKeyParameters{}
	}
	b := p.base2
	return rlwe.EvaluationKeyParameters{BaseTwoDecomposition: &b}
}

// checkGalEl checks that g is a Galois element (odd, < 2N) for X -> X^g.
func (p Parameters) checkGalEl(g uint64) error {
	if g%2 == 0 || g >= uint64(2*p.N()) {
		return fmt.Errorf("cheetah: Galois element %d is not an odd residue mod 2N=%d", g, 2*p.N())
	}
	return nil
}

// qAtLevel returns the modulus product at a level as a big integer.
func (p Parameters) qAtLevel(level int) *big.Int {
	q := big.NewInt(1)
	for _, qi := range p.rlwe.Q()[:level+1] {
		q.Mul(q, new(big.Int).SetUint64(qi))
	}
	return q
}

// LogQAtLevel returns log2 of the modulus product at a level.
func (p Parameters) LogQAtLevel(level int) float64 {
	s := 0.0
	for _, qi := range p.rlwe.Q()[:level+1] {
		s += math.Log2(float64(qi))
	}
	return s
}

func bitLen(x uint64) int {
	n := 0
	for x != 0 {
		n++
		x >>= 1
	}
	return n
}

func checkLogT(logT int) error {
	if logT < 1 || logT > MaxLogT {
		return fmt.Errorf("cheetah: plaintext modulus 2^%d outside [2^1, 2^%d]", logT, MaxLogT)
	}
	return nil
}
