package compiler

import (
	"encoding/json"
	"fmt"
	"math"
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

	"github.com/rosemary-fhe/rosemary/ir"
)

// bootPreset has enough levels for the test specs (23).
const bootPreset = "ckks-16"

// lattigoDefaultSpec is the BootSpec of Lattigo's default bootstrapping
// literal at LogN = 10 with full slots (checked against Lattigo below).
var lattigoDefaultSpec = ir.BootSpec{OutputLevel: 1, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 9, LogN: 10}

func buildBootProgram(t *testing.T, spec ir.BootSpec) *ir.Program {
	t.Helper()
	b := ir.NewBuilder("boot", bootPreset)
	x := b.Input("x", 3)
	b.Output("y", b.Boot(x, spec))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func opCounts(p *ir.Program) map[ir.Op]int {
	c := map[ir.Op]int{}
	for _, n := range p.Nodes {
		c[n.Op]++
	}
	return c
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

func TestExpandBootValidatesAndConsumesLevels(t *testing.T) {
	for _, spec := range []ir.BootSpec{
		lattigoDefaultSpec,
		{OutputLevel: 2, CtSLevels: 3, StCLevels: 2, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 6, LogN: 10},
		{OutputLevel: 0, CtSLevels: 2, StCLevels: 2, EvalModDegree: 63, LogSlots: 5, LogN: 12, SineEvalMod: true, ArcSineDegree: 7},
		{OutputLevel: 3, CtSLevels: 3, StCLevels: 3, EvalModDegree: 16, DoubleAngle: 2, LogSlots: 15}, // preset's LogN, full
	} {
		p := buildBootProgram(t, spec)
		q, err := ExpandBoot(p)
		if err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("%+v: expanded program invalid: %v", spec, err)
		}
		c := opCounts(q)
		if c[ir.OpBoot] != 0 || c[ir.OpModRaise] != 1 {
			t.Fatalf("%+v: %d Boot and %d ModRaise nodes left", spec, c[ir.OpBoot], c[ir.OpModRaise])
		}
		var raise, out ir.Node
		for _, n := range q.Nodes {
			switch n.Op {
			case ir.OpModRaise:
				raise = n
			case ir.OpOutput:
				out = n
			}
		}
		evalDepth := bitLen(spec.EvalModDegree) + spec.DoubleAngle + bitLen(spec.ArcSineDegree)
		if want := spec.OutputLevel + spec.CtSLevels + spec.StCLevels + evalDepth; raise.Level != want {
			t.Fatalf("%+v: ModRaise to level %d, want %d", spec, raise.Level, want)
		}
		if q.Nodes[raise.Args[0]].Level != 0 {
			t.Fatalf("%+v: ModRaise input at level %d", spec, q.Nodes[raise.Args[0]].Level)
		}
		// Every level between the top and the output is consumed by a
		// Rescale: the longest ModRaise → output path holds top − output
		// Rescales.
		if got := maxRescales(q, raise.ID, out.ID); out.Level != spec.OutputLevel || got != raise.Level-spec.OutputLevel {
			t.Fatalf("%+v: output level %d after at most %d rescales, want %d after %d", spec, out.Level, got, spec.OutputLevel, raise.Level-spec.OutputLevel)
		}
		// The result is a plain program: JSON round trip (which validates).
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		var back ir.Program
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		if !reflect.DeepEqual(q, &back) {
			t.Fatalf("%+v: JSON round trip differs", spec)
		}
	}
}

// TestExpandBootPolynomialShapes expands EvalMod polynomials of every
// degree up to 255, even and odd, with and without an arcsine: each
// expansion validates and spends every level of its budget on a Rescale
// (the longest ModRaise → output path holds top − output Rescales).
func TestExpandBootPolynomialShapes(t *testing.T) {
	for deg := 2; deg <= 255; deg++ {
		for _, sine := range []bool{false, true} {
			for _, arcsine := range []int{0, 3, 8} {
				spec := ir.BootSpec{OutputLevel: 0, CtSLevels: 2, StCLevels: 1, EvalModDegree: deg, LogSlots: 4, LogN: 10, SineEvalMod: sine, ArcSineDegree: arcsine}
				if !sine {
					spec.DoubleAngle = deg % 4
				}
				b := ir.NewBuilder("shape", "engorgio")
				x := b.Input("x", 0)
				b.Output("y", b.Boot(x, spec))
				p, err := b.Build()
				if err != nil {
					t.Fatal(err)
				}
				q, err := ExpandBoot(p)
				if err != nil {
					t.Fatalf("%+v: %v", spec, err)
				}
				raise := -1
				for _, n := range q.Nodes {
					if n.Op == ir.OpModRaise {
						raise = n.ID
					}
				}
				top := spec.CtSLevels + spec.StCLevels + bitLen(deg) + spec.DoubleAngle + bitLen(arcsine)
				if raise < 0 || q.Nodes[raise].Level != top {
					t.Fatalf("%+v: no ModRaise to level %d", spec, top)
				}
				if got := maxRescales(q, raise, len(q.Nodes)-1); got != top {
					t.Fatalf("%+v: %d rescales on the longest path, want %d", spec, got, top)
				}
			}
		}
	}
}

// maxRescales is the largest number of Rescale nodes on a path from node
// `from` to node `to`.
func maxRescales(p *ir.Program, from, to int) int {
	best := make([]int, len(p.Nodes))
	for i := range best {
		best[i] = -1
	}
	best[from] = 0
	for _, n := range p.Nodes[from+1:] {
		for _, a := range n.Args {
			if best[a] < 0 {
				continue
			}
			v := best[a]
			if n.Op == ir.OpRescale {
				v++
			}
			best[n.ID] = max(best[n.ID], v)
		}
	}
	return best[to]
}

func bitLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

func TestExpandBootTwoBoots(t *testing.T) {
	single, err := ExpandBoot(buildBootProgram(t, lattigoDefaultSpec))
	if err != nil {
		t.Fatal(err)
	}
	one := opCounts(single)

	b := ir.NewBuilder("two", bootPreset)
	x := b.Input("x", 0)
	w := b.Stored("w", 1, 4, true) // 4 instances: the Boots run 4 times
	y := b.Boot(x, lattigoDefaultSpec)
	z := b.Rescale(b.PMult(y, w))
	y2 := b.Boot(z, lattigoDefaultSpec)
	b.Output("first", y)
	b.Output("second", b.HAdd(y2, b.HRot(y2, 5)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ExpandBoot(p)
	if err != nil {
		t.Fatal(err)
	}
	c := opCounts(q)
	for _, op := range []ir.Op{ir.OpHMult, ir.OpRelinearize, ir.OpConjugate, ir.OpModRaise, ir.OpPMult} {
		extra := 0
		if op == ir.OpPMult {
			extra = 1 // the program's own PMult
		}
		if c[op] != 2*one[op]+extra {
			t.Errorf("%s: %d nodes, want 2×%d+%d", op, c[op], one[op], extra)
		}
	}
	if c[ir.OpHRot] != 2*one[ir.OpHRot]+1 {
		t.Errorf("HRot: %d, want 2×%d+1", c[ir.OpHRot], one[ir.OpHRot])
	}
	// The DFT diagonals are stored once and shared by both Boots.
	if c[ir.OpStored] != one[ir.OpStored]+1 {
		t.Errorf("Stored: %d, want %d shared diagonals + w", c[ir.OpStored], one[ir.OpStored]+1)
	}
	// References are remapped: the outputs read the bootstrapped values at
	// the output level, the second Boot's ModRaise depends on the first
	// Boot's result, and the instance counts follow the inputs.
	var raises []int
	outs := map[string]ir.Node{}
	for _, n := range q.Nodes {
		switch n.Op {
		case ir.OpModRaise:
			raises = append(raises, n.ID)
		case ir.OpOutput:
			outs[n.Name] = n
		}
	}
	first := q.Nodes[outs["first"].Args[0]]
	if first.Op != ir.OpRescale || first.Level != lattigoDefaultSpec.OutputLevel || first.Count != 1 {
		t.Fatalf("first output reads %+v", first)
	}
	second := q.Nodes[outs["second"].Args[0]]
	if second.Op != ir.OpHAdd || second.Count != 4 || q.Nodes[second.Args[1]].Op != ir.OpHRot {
		t.Fatalf("second output reads %+v", second)
	}
	if len(raises) != 2 || q.Nodes[raises[1]].Count != 4 || !dependsOn(q, raises[1], first.ID) || dependsOn(q, raises[0], first.ID) {
		t.Fatalf("ModRaise nodes %v do not follow the program order", raises)
	}
}

func dependsOn(p *ir.Program, from, to int) bool {
	seen := map[int]bool{}
	stack := []int{from}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == to {
			return true
		}
		if !seen[v] {
			seen[v] = true
			stack = append(stack, p.Nodes[v].Args...)
		}
	}
	return false
}

func TestExpandBootWithoutBootIsACopy(t *testing.T) {
	b := ir.NewBuilder("plain", "insecure-test")
	x := b.Input("x", 5)
	b.Output("y", b.Rescale(b.MulRelin(x, x)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ExpandBoot(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) || &p.Nodes[0] == &q.Nodes[0] {
		t.Fatalf("program without Boot changed or aliased")
	}
}

func TestExpandBootRejectsBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec ir.BootSpec
		want string
	}{
		{ir.BootSpec{OutputLevel: 10, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 9, LogN: 10}, "needs level 25"},
		{ir.BootSpec{OutputLevel: 1, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 10, LogN: 10}, "log slots"},
		{ir.BootSpec{OutputLevel: 1, CtSLevels: 0, StCLevels: 3, EvalModDegree: 30, LogSlots: 9, LogN: 10}, "CoeffsToSlots levels"},
		{ir.BootSpec{OutputLevel: 1, CtSLevels: 2, StCLevels: 3, EvalModDegree: 1, LogSlots: 9, LogN: 10}, "EvalMod degree"},
		{ir.BootSpec{OutputLevel: 1, CtSLevels: 2, StCLevels: 3, EvalModDegree: 31, DoubleAngle: 2, LogSlots: 9, LogN: 10, SineEvalMod: true}, "double angle"},
	} {
		_, err := ExpandBoot(buildBootProgram(t, tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}
	b := ir.NewBuilder("bgv", "bgv-14")
	x := b.Input("x", 0)
	b.Output("y", b.Boot(x, ir.BootSpec{OutputLevel: 0, CtSLevels: 1, StCLevels: 1, EvalModDegree: 2, LogSlots: 3}))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExpandBoot(p); err == nil || !strings.Contains(err.Error(), "not CKKS") {
		t.Fatalf("BGV Boot: %v", err)
	}
	if _, err := ExpandBoot(nil); err == nil {
		t.Fatal("nil program accepted")
	}
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

	spec, err := BootSpecFromLattigo(btp)
	if err != nil {
		t.Fatal(err)
	}
	if spec.OutputLevel != ev.OutputLevel() || spec.EvalModDegree != ev.Mod1Parameters.Mod1Poly.Degree() {
		t.Fatalf("spec %+v disagrees with the evaluator (output level %d, EvalMod degree %d)", spec, ev.OutputLevel(), ev.Mod1Parameters.Mod1Poly.Degree())
	}
	q, err := ExpandBoot(buildBootProgram(t, spec))
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
	if top := spec.OutputLevel + spec.StCLevels + spec.CtSLevels + bitLen(spec.EvalModDegree) + spec.DoubleAngle + bitLen(spec.ArcSineDegree); btp.Mod1ParametersLiteral.LevelQ != top-spec.CtSLevels {
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

func TestBootSpecFromLattigoRefusesUnmodelledVariants(t *testing.T) {
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{LogN: 10, LogQ: []int{60, 40}, LogP: []int{61}, LogDefaultScale: 40})
	if err != nil {
		t.Fatal(err)
	}
	btp, err := bootstrapping.NewParametersFromLiteral(params, bootstrapping.ParametersLiteral{LogN: utils.Pointy(10)})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := BootSpecFromLattigo(btp)
	if err != nil || spec != lattigoDefaultSpec {
		t.Fatalf("default parameters: %+v, %v; want %+v", spec, err, lattigoDefaultSpec)
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
		if _, err := BootSpecFromLattigo(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
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
	spec, err := BootSpecFromLattigo(btp)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ExpandBoot(buildBootProgram(t, spec))
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
	c := opCounts(q)
	t.Logf("%+v: %d rotation/conjugation key switches over %d keys, %d relinearizations; nodes %v", spec, switches, len(used), relin, c)
}

// TestModRaiseValidation covers the type rule added for ir.OpModRaise: a
// level-0 degree-1 argument, raised to a level ≥ 1.
func TestModRaiseValidation(t *testing.T) {
	prog := func(inLevel, outLevel int) *ir.Program {
		return &ir.Program{Name: "raise", Nodes: []ir.Node{
			{ID: 0, Op: ir.OpInput, Name: "x", Params: bootPreset, Level: inLevel, Degree: 1, Count: 1},
			{ID: 1, Op: ir.OpModRaise, Args: []int{0}, Params: bootPreset, Level: outLevel, Degree: 1, Count: 1},
			{ID: 2, Op: ir.OpOutput, Name: "y", Args: []int{1}, Params: bootPreset, Level: outLevel, Degree: 1, Count: 1},
		}}
	}
	if err := prog(0, 20).Validate(); err != nil {
		t.Fatalf("valid ModRaise refused: %v", err)
	}
	for _, tc := range []struct {
		in, out int
		want    string
	}{{3, 20, "level-0 argument"}, {0, 0, "level ≥ 1"}, {0, 24, "outside"}} {
		if err := prog(tc.in, tc.out).Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ModRaise %d → %d: error %v, want one mentioning %q", tc.in, tc.out, err, tc.want)
		}
	}
	if op, err := ir.ParseOp("ModRaise"); err != nil || op != ir.OpModRaise {
		t.Fatalf("ParseOp(ModRaise) = %q, %v", op, err)
	}
}
