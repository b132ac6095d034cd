package bootconst

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// TestPreset names the moduli chain of the test bootstrapping at a ring
// degree 2^logN (an fhe preset, so that IR programs can run on it).
func TestPreset(logN int) string { return fmt.Sprintf("insecure-boot-%d", logN) }

// KeySet is one Lattigo bootstrapping set-up with everything an executor
// needs to run compiler.ExpandBoot's expansion of it: the parameters, a
// secret key and the evaluation keys, Lattigo's evaluator (the reference)
// and the Provider of its constants.
type KeySet struct {
	Btp      bootstrapping.Parameters
	Params   ckks.Parameters // the bootstrapping circuit's
	Preset   fhe.Preset      // names Params' chain
	Spec     ir.BootSpec
	Sk       *rlwe.SecretKey
	Keys     engine.Keys
	Eval     *bootstrapping.Evaluator
	Provider *Provider
}

// NewTestKeySet is Lattigo's default bootstrapping at logN = 10, 11 or 12
// (10 is the size of Lattigo's own tests) over residual primes of 60 and 40
// bits, with 2^logSlots slots (logN − 1: full), without the sparse-secret encapsulation
// (which the expansion does not model), and the message ratio Lattigo's
// small-ring tests use. The secret has Hamming weight 32: at N = 2^10 the
// default 192 lets the multiple of q_0 that ModRaise adds exceed the
// EvalMod interval K = 16 for some keys, and Lattigo's own bootstrapping
// then fails (errors from 1e-6 to 3 over eight key draws).
func NewTestKeySet(logN, logSlots int) (*KeySet, error) {
	if logN < 10 || logN > 12 {
		return nil, fmt.Errorf("bootconst: test bootstrapping at logN %d; presets exist for 10…12", logN)
	}
	residual, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{LogN: logN, LogQ: []int{60, 40}, LogP: []int{61}, LogDefaultScale: 40})
	if err != nil {
		return nil, err
	}
	lit := bootstrapping.ParametersLiteral{LogN: utils.Pointy(logN), LogSlots: utils.Pointy(logSlots),
		EphemeralSecretWeight: utils.Pointy(0), Xs: ring.Ternary{H: 32}}
	btp, err := bootstrapping.NewParametersFromLiteral(residual, lit)
	if err != nil {
		return nil, fmt.Errorf("bootconst: %w", err)
	}
	btp.Mod1ParametersLiteral.LogMessageRatio += min(max(15-btp.LogMaxSlots(), 0), 8)
	k := &KeySet{Btp: btp, Params: btp.BootstrappingParameters}
	if k.Preset, err = fhe.Lookup(TestPreset(logN)); err != nil {
		return nil, err
	}
	if k.Params.LogN() != k.Preset.LogN || k.Params.MaxLevel() != k.Preset.Levels() || k.Params.PCount() != len(k.Preset.LogP) {
		return nil, fmt.Errorf("bootconst: preset %s does not name the bootstrapping chain (logN %d, %d levels, %d special primes)",
			k.Preset.Name, k.Params.LogN(), k.Params.MaxLevel(), k.Params.PCount())
	}
	k.Sk = rlwe.NewKeyGenerator(k.Params).GenSecretKeyNew()
	evk, _, err := btp.GenEvaluationKeys(k.Sk)
	if err != nil {
		return nil, err
	}
	gal := map[uint64]*rlwe.GaloisKey{}
	for g, key := range evk.GaloisKeys {
		gal[g] = key
	}
	k.Keys = engine.Keys{Relin: evk.RelinearizationKey, Galois: gal}
	if k.Eval, err = bootstrapping.NewEvaluator(btp, evk); err != nil {
		return nil, err
	}
	if k.Provider, err = New(k.Eval); err != nil {
		return nil, err
	}
	if k.Spec, err = Spec(btp); err != nil {
		return nil, err
	}
	return k, nil
}

// Program is one Boot of the key set's spec on an input "x" at level 0
// with output "y", expanded.
func (k *KeySet) Program() (*ir.Program, error) {
	b := ir.NewBuilder("boot", k.Preset.Name)
	x := b.Input("x", 0)
	b.Output("y", b.Boot(x, k.Spec))
	p, err := b.Build()
	if err != nil {
		return nil, err
	}
	return compiler.ExpandBoot(p)
}

// Executor returns an executor of the key set's programs: nodes onDevice
// selects on the device interpreter, the others on the host; hoisted runs
// the DFT products as Lattigo's hoisted programs, else node by node.
func (k *KeySet) Executor(onDevice func(int) bool, hoisted bool) (*engine.Executor, error) {
	x, err := engine.NewExecutor(k.Preset, k.Params, k.Keys)
	if err != nil {
		return nil, err
	}
	x.OnDevice, x.Constants = onDevice, k.Provider
	if hoisted {
		x.Diagonals = k.Provider
	}
	return x, nil
}
