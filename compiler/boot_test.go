package compiler

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// bootPreset has enough levels for the test specs (23).
const bootPreset = "ckks-16"

// lattigoDefaultSpec is the BootSpec of Lattigo's default bootstrapping
// literal at LogN = 10 with full slots (bootconst.Spec derives it from
// Lattigo's parameters; spec_test.go there checks it).
var lattigoDefaultSpec = ir.BootSpec{OutputLevel: 1, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 9, LogN: 10}

func buildBootProgram(t *testing.T, spec ir.BootSpec) *ir.Program {
	t.Helper()
	b := ir.NewBuilder("boot", bootPreset)
	x := b.Input("x", 3)
	b.Output("y", b.Boot(x, spec))
	return mustBuild(t, b)
}

// mustBuild is b's program; the tests build only valid ones.
func mustBuild(t *testing.T, b *ir.Builder) *ir.Program {
	t.Helper()
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustExpandBoot is p with its Boot nodes expanded.
func mustExpandBoot(t *testing.T, p *ir.Program) *ir.Program {
	t.Helper()
	q, err := ExpandBoot(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func opCounts(p *ir.Program) map[ir.Op]int {
	c := map[ir.Op]int{}
	for _, n := range p.Nodes {
		c[n.Op]++
	}
	return c
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
				p := mustBuild(t, b)
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
	single := mustExpandBoot(t, buildBootProgram(t, lattigoDefaultSpec))
	one := opCounts(single)

	b := ir.NewBuilder("two", bootPreset)
	x := b.Input("x", 0)
	w := b.Stored("w", 1, 4, true) // 4 instances: the Boots run 4 times
	y := b.Boot(x, lattigoDefaultSpec)
	z := b.Rescale(b.PMult(y, w))
	y2 := b.Boot(z, lattigoDefaultSpec)
	b.Output("first", y)
	b.Output("second", b.HAdd(y2, b.HRot(y2, 5)))
	p := mustBuild(t, b)
	q := mustExpandBoot(t, p)
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
	if len(raises) != 2 || q.Nodes[raises[1]].Count != 4 || !q.DependsOn(raises[1], first.ID) || q.DependsOn(raises[0], first.ID) {
		t.Fatalf("ModRaise nodes %v do not follow the program order", raises)
	}
}

func TestExpandBootWithoutBootIsACopy(t *testing.T) {
	b := ir.NewBuilder("plain", "insecure-test")
	x := b.Input("x", 5)
	b.Output("y", b.Rescale(b.MulRelin(x, x)))
	p := mustBuild(t, b)
	q := mustExpandBoot(t, p)
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
	p := mustBuild(t, b)
	if _, err := ExpandBoot(p); err == nil || !strings.Contains(err.Error(), "not CKKS") {
		t.Fatalf("BGV Boot: %v", err)
	}
	if _, err := ExpandBoot(nil); err == nil {
		t.Fatal("nil program accepted")
	}
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
