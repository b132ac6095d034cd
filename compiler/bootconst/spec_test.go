package bootconst_test

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/dft"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/mod1"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/polynomial"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/bootconst"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// The spec of Lattigo's parameters, expanded by compiler.ExpandBoot, is
// checked against Lattigo's own bootstrapping: the same key switches, the
// same levels, as many DFT diagonals.

// defaultSpec is the BootSpec of Lattigo's default bootstrapping literal
// at LogN = 10 with full slots.
var defaultSpec = ir.BootSpec{OutputLevel: 1, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 9, LogN: 10}

// specProgram is one Boot of spec on ckks-16 (enough levels for the specs
// here).
func specProgram(t *testing.T, spec ir.BootSpec) *ir.Program {
	t.Helper()
	b := ir.NewBuilder("boot", "ckks-16")
	x := b.Input("x", 3)
	b.Output("y", b.Boot(x, spec))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// keySwitches is the multiset of key switches of a program as Lattigo
// Galois elements (HRot k → 5^k mod 2N, Conjugate → 2N−1) plus the number
// of relinearizations.
func keySwitches(p *ir.Program, params ckks.Parameters) (map[uint64]int, int) {
	gal := map[uint64]int{}
	relin := 0
	for _, n := range p.Nodes {
		switch n.Op {
		case ir.OpHRot:
			gal[params.GaloisElement(n.Rotation)]++
		case ir.OpConjugate:
			gal[params.GaloisElementForComplexConjugation()]++
		case ir.OpRelinearize:
			relin++
		}
	}
	return gal, relin
}

// countingKeys wraps Lattigo's in-memory key set and records every key
// fetch: each GetGaloisKey is one rotation/conjugation key switch, each
// GetRelinearizationKey one relinearization.
type countingKeys struct {
	rlwe.EvaluationKeySet
	mu     sync.Mutex
	galois map[uint64]int
	relin  int
}

func (c *countingKeys) GetGaloisKey(galEl uint64) (*rlwe.GaloisKey, error) {
	c.mu.Lock()
	c.galois[galEl]++
	c.mu.Unlock()
	return c.EvaluationKeySet.GetGaloisKey(galEl)
}

func (c *countingKeys) GetRelinearizationKey() (*rlwe.RelinearizationKey, error) {
	c.mu.Lock()
	c.relin++
	c.mu.Unlock()
	return c.EvaluationKeySet.GetRelinearizationKey()
}

func (c *countingKeys) ShallowCopy() rlwe.EvaluationKeySet { return c }

// TestExpandBootMatchesLattigo runs Lattigo's bootstrapping at LogN = 10
// (its own test size) with a key set that counts key fetches, and compares
// the multiset of Galois elements and the number of relinearizations with
// the expansion of the BootSpec derived from the same parameters, and the
// levels consumed.
func TestExpandBootMatchesLattigo(t *testing.T) {
	cases := []struct {
		name string
		logQ []int // residual primes
		lit  bootstrapping.ParametersLiteral
	}{
		{"full-slots-defaults", []int{60, 40}, bootstrapping.ParametersLiteral{}},
		{"sparse-64-slots", []int{60, 40}, bootstrapping.ParametersLiteral{
			LogSlots: utils.Pointy(6),
			CoeffsToSlotsFactorizationDepthAndLogScales: [][]int{{56}, {56}, {56}},
			SlotsToCoeffsFactorizationDepthAndLogScales: [][]int{{39}, {39}},
		}},
		{"sparse-256-slots-sine", []int{60, 40, 40}, bootstrapping.ParametersLiteral{
			LogSlots: utils.Pointy(8),
			Mod1Type: mod1.SinContinuous, DoubleAngle: utils.Pointy(0), K: utils.Pointy(12),
			Mod1Degree: utils.Pointy(127),
		}},
		{"full-slots-arcsine", []int{60, 40}, bootstrapping.ParametersLiteral{
			Mod1InvDegree: utils.Pointy(7),
		}},
		{"full-slots-cos-continuous", []int{60, 40, 40}, bootstrapping.ParametersLiteral{
			Mod1Type: mod1.CosContinuous, DoubleAngle: utils.Pointy(2), Mod1Degree: utils.Pointy(44),
			CoeffsToSlotsFactorizationDepthAndLogScales: [][]int{{56}, {56}},
			SlotsToCoeffsFactorizationDepthAndLogScales: [][]int{{39}},
		}},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { compareWithLattigo(t, tc.logQ, tc.lit) })
	}
}

func compareWithLattigo(t *testing.T, logQ []int, lit bootstrapping.ParametersLiteral) {
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN: 10, LogQ: logQ, LogP: []int{61}, LogDefaultScale: 40,
	})
	if err != nil {
		t.Fatal(err)
	}
	lit.LogN = utils.Pointy(params.LogN())
	btp, err := bootstrapping.NewParametersFromLiteral(params, lit)
	if err != nil {
		t.Fatal(err)
	}
	// As in Lattigo's own small-ring tests (bootstrapping/evaluator_test.go,
	// testRawCircuit): a larger message ratio for few slots (it does not
	// change the circuit).
	btp.Mod1ParametersLiteral.LogMessageRatio += min(max(15-btp.LogMaxSlots(), 0), 8)

	sk := rlwe.NewKeyGenerator(btp.BootstrappingParameters).GenSecretKeyNew()
	keys, _, err := btp.GenEvaluationKeys(sk)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := bootstrapping.NewEvaluator(btp, keys)
	if err != nil {
		t.Fatal(err)
	}
	// Route all key fetches of the bootstrapping through the counter
	// (NewEvaluator's own key check is not counted).
	ck := &countingKeys{EvaluationKeySet: keys.MemEvaluationKeySet, galois: map[uint64]int{}}
	bp := btp.BootstrappingParameters
	ev.Evaluator = ev.Evaluator.WithKey(ck)
	ev.DFTEvaluator = dft.NewEvaluator(bp, ev.Evaluator)
	ev.Mod1Evaluator = mod1.NewEvaluator(ev.Evaluator, polynomial.NewEvaluator(bp, ev.Evaluator), ev.Mod1Parameters)

	ecd := ckks.NewEncoder(params)
	slots := 1 << btp.LogMaxSlots()
	values := make([]complex128, slots)
	for i := range values {
		values[i] = complex(0.5*math.Sin(float64(i)), 0.25*math.Cos(float64(i)))
	}
	pt := ckks.NewPlaintext(params, 0)
	pt.LogDimensions = btp.LogMaxDimensions()
	if err := ecd.Encode(values, pt); err != nil {
		t.Fatal(err)
	}
	ct, err := rlwe.NewEncryptor(params, sk).EncryptNew(pt)
	if err != nil {
		t.Fatal(err)
	}
	// Evaluate is the circuit Bootstrap runs per ciphertext; it is called
	// directly (as Lattigo's own sparse-slot tests do) because Bootstrap's
	// packing step relabels a sparse ciphertext as full (LogDimensions),
	// which turns CoeffsToSlots' repacking rotation by `slots` into the
	// identity (5^(N/2) ≡ 1): it then skips that key switch and decrypts
	// wrongly.
	out, err := ev.Evaluate(ct)
	if err != nil {
		t.Fatal(err)
	}
	// The bootstrapping worked (so the counted run is a real one).
	got := make([]complex128, slots)
	if err := ecd.Decode(rlwe.NewDecryptor(params, sk).DecryptNew(out), got); err != nil {
		t.Fatal(err)
	}
	var maxErr float64
	for i := range got {
		maxErr = math.Max(maxErr, cmplxAbs(got[i]-values[i]))
	}
	if maxErr > 1e-2 {
		t.Fatalf("Lattigo bootstrapping error %.3g", maxErr)
	}

	spec, err := bootconst.Spec(btp)
	if err != nil {
		t.Fatal(err)
	}
	if spec.OutputLevel != ev.OutputLevel() || spec.EvalModDegree != ev.Mod1Parameters.Mod1Poly.Degree() {
		t.Fatalf("spec %+v disagrees with the evaluator (output level %d, EvalMod degree %d)", spec, ev.OutputLevel(), ev.Mod1Parameters.Mod1Poly.Degree())
	}
	q, err := compiler.ExpandBoot(specProgram(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	gal, relin := keySwitches(q, bp)
	rotations := 0
	for _, n := range gal {
		rotations += n
	}
	lattigoRot := 0
	for _, n := range ck.galois {
		lattigoRot += n
	}
	t.Logf("%+v: Lattigo %d Galois key switches (%d distinct keys) + %d relinearizations; expansion %d + %d; output level %d, top level %d",
		spec, lattigoRot, len(ck.galois), ck.relin, rotations, relin, out.Level(), bp.MaxLevel())
	if !reflect.DeepEqual(gal, ck.galois) {
		t.Errorf("Galois key switches differ:\n expansion %v\n lattigo   %v", sortedCounts(gal), sortedCounts(ck.galois))
	}
	if relin != ck.relin {
		t.Errorf("relinearizations: expansion %d, Lattigo %d", relin, ck.relin)
	}
	// The DFT matrices have as many plaintext diagonals as Lattigo encodes
	// (each one a Stored plaintext here, used by one PMult).
	for _, d := range []struct {
		name string
		m    dft.Matrix
	}{{"cts", ev.C2SDFTMatrix}, {"stc", ev.S2CDFTMatrix}} {
		for i, lt := range d.m.Matrices {
			prefix := fmt.Sprintf("/%s%d/diag", d.name, i)
			n := 0
			for _, node := range q.Nodes {
				if node.Op == ir.OpStored && strings.Contains(node.Name, prefix) {
					n++
				}
			}
			if n != len(lt.Vec) {
				t.Errorf("%s matrix %d: %d diagonals, Lattigo encodes %d", d.name, i, n, len(lt.Vec))
			}
		}
	}
	// Levels: ModRaise goes to Lattigo's top level, EvalMod starts at its
	// Mod1 level, and the result sits at Lattigo's output level.
	for _, n := range q.Nodes {
		if n.Op == ir.OpModRaise && n.Level != bp.MaxLevel() {
			t.Errorf("ModRaise to %d, Lattigo's chain tops at %d", n.Level, bp.MaxLevel())
		}
		if n.Op == ir.OpOutput && n.Level != out.Level() {
			t.Errorf("output level %d, Lattigo's %d", n.Level, out.Level())
		}
	}
	if top := spec.OutputLevel + spec.StCLevels + spec.CtSLevels + bits.Len(uint(spec.EvalModDegree)) + spec.DoubleAngle + bits.Len(uint(spec.ArcSineDegree)); btp.Mod1ParametersLiteral.LevelQ != top-spec.CtSLevels {
		t.Errorf("EvalMod level %d, Lattigo's %d", top-spec.CtSLevels, btp.Mod1ParametersLiteral.LevelQ)
	}
}

func cmplxAbs(z complex128) float64 { return math.Hypot(real(z), imag(z)) }

func sortedCounts(m map[uint64]int) [][2]uint64 {
	s := make([][2]uint64, 0, len(m))
	for k, v := range m {
		s = append(s, [2]uint64{k, uint64(v)})
	}
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	return s
}

func TestSpecRefusesUnmodelledVariants(t *testing.T) {
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{LogN: 10, LogQ: []int{60, 40}, LogP: []int{61}, LogDefaultScale: 40})
	if err != nil {
		t.Fatal(err)
	}
	btp, err := bootstrapping.NewParametersFromLiteral(params, bootstrapping.ParametersLiteral{LogN: utils.Pointy(10)})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := bootconst.Spec(btp)
	if err != nil || spec != defaultSpec {
		t.Fatalf("default parameters: %+v, %v; want %+v", spec, err, defaultSpec)
	}
	iter := btp
	iter.IterationsParameters = &bootstrapping.IterationsParameters{BootstrappingPrecision: []float64{20, 20}}
	merged := btp
	merged.CoeffsToSlotsParameters.Levels = []int{2, 1, 1}
	// Ring switching as in Lattigo's own test: residual N = 2^9 with the
	// 2^11-th roots of unity, bootstrapping at N = 2^10.
	small, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{LogN: 9, LogNthRoot: 11, LogQ: []int{60, 40}, LogP: []int{61}, LogDefaultScale: 40})
	if err != nil {
		t.Fatal(err)
	}
	switched, err := bootstrapping.NewParametersFromLiteral(small, bootstrapping.ParametersLiteral{LogN: utils.Pointy(10)})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		p    bootstrapping.Parameters
		want string
	}{
		"iterations": {iter, "iterations"},
		"merged":     {merged, "merges 2 matrices"},
		"switching":  {switched, "ring-degree switching"},
	} {
		if _, err := bootconst.Spec(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, tc.want)
		}
	}
}

// TestExpandBootKeySetAtN16 checks the full-size case without running it:
// for Lattigo's default bootstrapping at N = 2^16 (full 2^15 slots, and
// sparse 2^12) the
// expansion rotates by exactly the Galois elements Lattigo generates keys
// for (bootstrapping.Parameters.GaloisElements), and reaches its levels.
func TestExpandBootKeySetAtN16(t *testing.T) {
	if testing.Short() {
		t.Skip("builds N = 2^16 parameters")
	}
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN: 16, LogQ: []int{60, 40, 40, 40}, LogP: []int{61, 61}, LogDefaultScale: 40,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, logSlots := range []int{15, 12} {
		btp, err := bootstrapping.NewParametersFromLiteral(params, bootstrapping.ParametersLiteral{LogN: utils.Pointy(16), LogSlots: utils.Pointy(logSlots)})
		if err != nil {
			t.Fatal(err)
		}
		checkKeySet(t, btp)
	}
}

func checkKeySet(t *testing.T, btp bootstrapping.Parameters) {
	spec, err := bootconst.Spec(btp)
	if err != nil {
		t.Fatal(err)
	}
	q, err := compiler.ExpandBoot(specProgram(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	bp := btp.BootstrappingParameters
	gal, relin := keySwitches(q, bp)
	want := map[uint64]bool{}
	for _, g := range btp.GaloisElements(bp) {
		want[g] = true
	}
	used := map[uint64]bool{}
	switches := 0
	for g, n := range gal {
		used[g] = true
		switches += n
	}
	if !reflect.DeepEqual(used, want) {
		t.Errorf("expansion uses %d Galois elements, Lattigo generates %d keys", len(used), len(want))
	}
	for _, n := range q.Nodes {
		if n.Op == ir.OpModRaise && n.Level != bp.MaxLevel() {
			t.Errorf("ModRaise to %d, Lattigo's chain tops at %d", n.Level, bp.MaxLevel())
		}
	}
	t.Logf("%+v: %d rotation/conjugation key switches over %d keys, %d relinearizations; %d nodes", spec, switches, len(used), relin, len(q.Nodes))
}
