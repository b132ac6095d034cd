package compiler_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

func rosemary(t *testing.T) *arch.Arch {
	t.Helper()
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func compile(t *testing.T, p *ir.Program, a *arch.Arch, opt string) *compiler.Plan {
	t.Helper()
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: compiler.OptLevel(opt)})
	if err != nil {
		t.Fatalf("%s/%s: %v", p.Name, opt, err)
	}
	return plan
}

// The compiler moves the PIR database scan to the SSD: only the small row
// sums and the answer cross the link. With the database stored compact,
// TDAP alone keeps the scan on the host (without CLCAO's streaming the
// scan's products would spill to LPDDR, and the compact database is cheap
// to ship); TDAP after CLCAO moves it.
func TestPIRScanMovesToSSD(t *testing.T) {
	p, err := workload.Program("pir")
	if err != nil {
		t.Fatal(err)
	}
	tdapOnly := compile(t, p, rosemary(t), "tdap")
	plan := compile(t, p, rosemary(t), "full")
	if plan.EstLatency >= tdapOnly.EstLatency {
		t.Errorf("full estimate %.4g s not below TDAP alone %.4g s", plan.EstLatency, tdapOnly.EstLatency)
	}
	if plan.CutBytes*100 > plan.HostOnlyBytes {
		t.Fatalf("cut %d bytes vs host-only %d: less than 100× smaller", plan.CutBytes, plan.HostOnlyBytes)
	}
	for i, n := range plan.Program.Nodes {
		if n.Op == ir.OpPMult && plan.Placement[i] != compiler.SSD {
			t.Fatalf("the database scan (node %d) is on the %s", i, plan.Placement[i])
		}
	}
}

// full never estimates slower than tdap, tdap never slower than bare.
func TestOptimisationLevelsAreOrdered(t *testing.T) {
	a := rosemary(t)
	for _, w := range workload.Names() {
		for _, size := range []string{"full", "small"} {
			p, err := workload.Program(w + ":" + size)
			if err != nil {
				t.Fatal(err)
			}
			bare, tdap, full := compile(t, p, a, "bare"), compile(t, p, a, "tdap"), compile(t, p, a, "full")
			const eps = 1e-12
			if tdap.EstLatency > bare.EstLatency*(1+eps) || full.EstLatency > tdap.EstLatency*(1+eps) {
				t.Errorf("%s:%s: bare %.6g s, tdap %.6g s, full %.6g s", w, size, bare.EstLatency, tdap.EstLatency, full.EstLatency)
			}
		}
	}
}

// CLCAO's streaming schedule removes the spills of vectorised score summation.
func TestScoreSummationSpillsDrop(t *testing.T) {
	p, err := workload.VecDistShape{Name: "scores", Params: "hevec", Plaintexts: 1 << 16, Dim: 96, Groups: 16}.Program()
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, p, rosemary(t), "full")
	if plan.SpilledBytesBefore == 0 || plan.SpilledBytes*10 > plan.SpilledBytesBefore {
		t.Fatalf("spilled %d bytes before CLCAO, %d after: want a ≥10× drop", plan.SpilledBytesBefore, plan.SpilledBytes)
	}
}

func TestCompileRejectsBadInput(t *testing.T) {
	p, _ := workload.Program("pir:small")
	if _, err := compiler.Compile(p, rosemary(t), compiler.Options{Opt: "turbo"}); err == nil {
		t.Fatal("accepted an unknown optimisation level")
	}
	if _, err := compiler.Compile(p, rosemary(t), compiler.Options{DumpAfter: "nope"}); err == nil {
		t.Fatal("accepted an unknown pass")
	}
	bad := *p
	bad.Nodes = append([]ir.Node(nil), p.Nodes...)
	bad.Nodes[3].Args = []int{99, 2}
	if _, err := compiler.Compile(&bad, rosemary(t), compiler.Options{}); err == nil {
		t.Fatal("compiled an invalid program")
	}
}

// ckksEnv is a small CKKS key set for executing programs for real.
type ckksEnv struct {
	*fhetest.CKKS
	keys engine.Keys
}

func newCKKSEnv(t *testing.T, preset string, rotations []int) *ckksEnv {
	t.Helper()
	c := fhetest.NewCKKS(t, preset)
	c.AddGaloisKeys(c.Params.GaloisElements(rotations)...)
	return &ckksEnv{CKKS: c, keys: engine.Keys{Relin: c.Relin, Galois: c.Galois}}
}

func (e *ckksEnv) vec(seed, n int) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		v[i] = complex(math.Sin(float64(seed*7919+i*31)), 0)
	}
	return v
}

// pt encodes v at the top level.
func (e *ckksEnv) pt(t *testing.T, v []complex128) *rlwe.Plaintext {
	t.Helper()
	return e.EncodeComplex(t, v, e.Params.MaxLevel())
}

func (e *ckksEnv) run(t *testing.T, p *ir.Program, onDevice func(int) bool, in, st map[string][]engine.Value) (map[string][]engine.Value, engine.ExecStats) {
	t.Helper()
	out, stats, _ := e.runValues(t, p, onDevice, in, st)
	return out, stats
}

func (e *ckksEnv) runValues(t *testing.T, p *ir.Program, onDevice func(int) bool, in, st map[string][]engine.Value) (map[string][]engine.Value, engine.ExecStats, [][]engine.Value) {
	t.Helper()
	x, err := engine.NewExecutor(e.Preset, e.Params, e.keys)
	if err != nil {
		t.Fatal(err)
	}
	x.OnDevice = onDevice
	out, err := x.Run(context.Background(), p, in, st)
	if err != nil {
		t.Fatal(err)
	}
	return out, x.Stats, x.Values
}

// checkSegmentPrograms materialises every device segment as one mProgram,
// runs it on the interpreter with the host run's operands and checks each
// value it produces against the host run, bit for bit.
func checkSegmentPrograms(t *testing.T, plan *compiler.Plan, p *ir.Program, e *ckksEnv, values [][]engine.Value) {
	t.Helper()
	sized := *plan
	sized.Program = p
	rg := lower.RingOf(e.Params.Parameters)
	checked := 0
	for s, seg := range plan.Segments {
		if !seg.OnSSD() {
			continue
		}
		sp, err := sized.SegmentProgram(s, rg, fhe.CKKS, 0)
		if err != nil {
			t.Fatalf("segment %d: %v", s, err)
		}
		mem := engine.NewMemObjects()
		put := func(o compiler.ObjectRef) {
			v := values[o.Node][o.Instance]
			if v.Ct != nil {
				mem.Set(o.Space, o.ID, engine.PolyLimbs(v.Ct.Value, o.Limbs))
			} else {
				mem.Set(o.Space, o.ID, engine.PolyLimbs([]ring.Poly{v.Pt.Value}, o.Limbs))
			}
		}
		for _, o := range sp.Inputs {
			put(o)
		}
		for _, o := range sp.Stored {
			put(o)
		}
		for _, o := range sp.Keys {
			var g uint64
			fmt.Sscanf(o.Key, "gal:%d", &g)
			gk, ok := e.keys.Galois[g]
			if o.Key == "rlk" {
				mem.Set(o.Space, o.ID, engine.KeyLimbs(&e.keys.Relin.GadgetCiphertext))
				continue
			}
			if !ok {
				t.Fatalf("no key %s", o.Key)
			}
			mem.Set(o.Space, o.ID, engine.KeyLimbs(&gk.GadgetCiphertext))
		}
		m, err := engine.NewMachine(sp.Program.Config, mem)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Run(sp.Program); err != nil {
			t.Fatal(err)
		}
		for _, o := range sp.Outputs {
			want := values[o.Node][o.Instance].Ct
			got := want.CopyNew()
			if !engine.CopyLimbs(mem.Get(o.Space, o.ID), got.Value, o.Limbs) {
				t.Fatalf("segment %d: node %d instance %d has the wrong shape", s, o.Node, o.Instance)
			}
			compareCt(t, want, got)
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no device values checked")
	}
}

// A program compiled with --opt full and split across host and device
// gives, value for value, the same ciphertexts as running it whole in
// Lattigo (the device's mPrograms are bit-exact), and decrypts to the
// plaintext reference.
const tailRotations = 24

func TestSplitExecutionMatchesLattigo(t *testing.T) {
	// Scores near the data, then a compute-heavy tail on the two score sums
	// (many rotations), on an SSD with a small engine (4 AUs).
	const big = 1 << 16
	b := ir.NewBuilder("split", "insecure-test")
	qn := b.Input("query", 5)
	dbn := b.Stored("vectors", 5, big, true)
	x := b.Rescale(b.PMult(qn, dbn))
	for i := 0; i < 2; i++ {
		x = b.HAdd(x, b.HRot(x, 1<<i))
	}
	s := b.Sum(x, 2)
	s = b.Rescale(b.MulRelin(s, s))
	for i := 0; i < tailRotations; i++ {
		s = b.HAdd(s, b.HRot(s, 1))
	}
	b.Output("scores", s)
	prog, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	weak, err := arch.WithAUs(rosemary(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, prog, weak, "full")
	placed := map[compiler.Device]bool{}
	for i, d := range plan.Placement {
		if op := plan.Program.Nodes[i].Op; op != ir.OpInput && op != ir.OpOutput && op != ir.OpStored {
			placed[d] = true
		}
	}
	if !placed[compiler.Host] || !placed[compiler.SSD] {
		t.Fatalf("plan does not split the computation: %v", plan.Placement)
	}
	// Execute the same plan with 8 stored plaintexts instead of 2^16.
	p := shrink(t, plan.Program, big, 8)
	e := newCKKSEnv(t, "insecure-test", []int{1, 2})
	slots := e.Params.MaxSlots()
	q := e.vec(1, slots)
	in := map[string][]engine.Value{"query": {{Ct: e.Encrypt(t, e.pt(t, q))}}}
	var db [][]complex128
	var pts []engine.Value
	for i := 0; i < 8; i++ {
		db = append(db, e.vec(i+2, slots))
		pts = append(pts, engine.Value{Pt: e.pt(t, db[i])})
	}
	st := map[string][]engine.Value{"vectors": pts}
	whole, _, values := e.runValues(t, p, nil, in, st)
	checkSegmentPrograms(t, plan, p, e, values)
	split, stats := e.run(t, p, func(i int) bool { return plan.Placement[i] == compiler.SSD }, in, st)
	if stats.DeviceOps == 0 || stats.HostOps == 0 {
		t.Fatalf("execution not split: %+v", stats)
	}
	for g := range whole["scores"] {
		compareCt(t, whole["scores"][g].Ct, split["scores"][g].Ct)
		got := e.DecryptComplex(t, split["scores"][g].Ct)
		// Before the tail, slot i holds (Σ over the group's 4 plaintexts of
		// Σ_{k<4} q[i+k]·x[i+k])²; each tail round adds the right neighbour.
		ref := make([]complex128, slots)
		for i := range ref {
			var sum complex128
			for blk := 4 * g; blk < 4*g+4; blk++ {
				for k := 0; k < 4; k++ {
					sum += q[(i+k)%slots] * db[blk][(i+k)%slots]
				}
			}
			ref[i] = sum * sum
		}
		for r := 0; r < tailRotations; r++ {
			next := make([]complex128, slots)
			for i := range ref {
				next[i] = ref[i] + ref[(i+1)%slots]
			}
			ref = next
		}
		for i := range ref {
			if cmplx.Abs(got[i]-ref[i]) > 1e-3*(1+cmplx.Abs(ref[i])) {
				t.Fatalf("group %d slot %d: %v, want %v", g, i, got[i], ref[i])
			}
		}
	}
}

// Rotation-key decomposition: with room for only two keys in eDRAM, CLCAO
// rewrites cold rotations as chains of hot ones, and the rewritten program
// decrypts to the same result as the original.
func TestRotationDecompositionPreservesResults(t *testing.T) {
	shape := workload.VecDistShape{Name: "rot", Params: "insecure-test", Plaintexts: 1 << 16, Dim: 16, Groups: 1}
	p, err := shape.Program()
	if err != nil {
		t.Fatal(err)
	}
	e := newCKKSEnv(t, "insecure-test", []int{1, 2, 4, 8})
	small, err := arch.WithEDRAM(rosemary(t), 2*200<<10)
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, p, small, "full")
	if plan.RotationsRewritten == 0 {
		t.Fatalf("no rotation rewritten (hot %v)", plan.HotRotations)
	}
	// Execute both programs with 64 stored plaintexts.
	p = shrink(t, p, 1<<16, 64)
	rw := shrink(t, plan.Program, 1<<16, 64)
	slots := e.Params.MaxSlots()
	q := e.vec(3, slots)
	in := map[string][]engine.Value{"query": {{Ct: e.Encrypt(t, e.pt(t, q))}}}
	var pts []engine.Value
	for i := 0; i < 64; i++ {
		pts = append(pts, engine.Value{Pt: e.pt(t, e.vec(i+9, slots))})
	}
	st := map[string][]engine.Value{"vectors": pts}
	orig, _ := e.run(t, p, nil, in, st)
	rewritten, _ := e.run(t, rw, func(i int) bool { return plan.Placement[i] == compiler.SSD }, in, st)
	a, b := e.DecryptComplex(t, orig["scores"][0].Ct), e.DecryptComplex(t, rewritten["scores"][0].Ct)
	for i := range a {
		if cmplx.Abs(a[i]-b[i]) > 1e-4 {
			t.Fatalf("slot %d: rewritten %v, original %v", i, b[i], a[i])
		}
	}
}

// shrink returns p with every count `from` replaced by `to` (the program's
// structure, and so its plan, is unchanged).
func shrink(t *testing.T, p *ir.Program, from, to int64) *ir.Program {
	t.Helper()
	q := *p
	q.Nodes = append([]ir.Node(nil), p.Nodes...)
	for i := range q.Nodes {
		if q.Nodes[i].Count == from {
			q.Nodes[i].Count = to
		}
	}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	return &q
}

func compareCt(t *testing.T, a, b *rlwe.Ciphertext) {
	t.Helper()
	if a.Level() != b.Level() || len(a.Value) != len(b.Value) {
		t.Fatalf("shapes differ: level %d/%d, degree %d/%d", a.Level(), b.Level(), a.Degree(), b.Degree())
	}
	for p := range a.Value {
		for l := range a.Value[p].Coeffs {
			for c, v := range a.Value[p].Coeffs[l] {
				if b.Value[p].Coeffs[l][c] != v {
					t.Fatalf("ciphertexts differ at poly %d limb %d coefficient %d", p, l, c)
				}
			}
		}
	}
}

// A program with bootstrapping compiles at every level (Boot is expanded
// into its CoeffsToSlots / EvalMod / SlotsToCoeffs operations first).
func TestCompileWithBootstrapping(t *testing.T) {
	b := ir.NewBuilder("boot", "engorgio")
	x := b.Input("x", 43)
	db := b.Stored("weights", 43, 64, true)
	y := b.Rescale(b.PMult(x, db))
	y = b.LevelDown(y, 3)
	z := b.Boot(y, ir.BootSpec{OutputLevel: 20, CtSLevels: 3, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 16})
	b.Output("out", b.Sum(z, 1))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a := rosemary(t)
	bare, tdap, full := compile(t, p, a, "bare"), compile(t, p, a, "tdap"), compile(t, p, a, "full")
	if len(full.Program.Nodes) <= len(p.Nodes) {
		t.Fatalf("Boot was not expanded: %d nodes", len(full.Program.Nodes))
	}
	if tdap.EstLatency > bare.EstLatency*(1+1e-12) || full.EstLatency > tdap.EstLatency*(1+1e-12) {
		t.Fatalf("bare %.4g s, tdap %.4g s, full %.4g s", bare.EstLatency, tdap.EstLatency, full.EstLatency)
	}
}

// Public constants are made where they are used: never pinned, never
// transferred, not counted in the host-only traffic.
func TestPublicConstantsDoNotCross(t *testing.T) {
	b := ir.NewBuilder("consts", "insecure-test")
	x := b.Input("x", 5)
	y := b.PMult(x, b.Constant("mask", 5, 4096))
	b.Output("y", b.Sum(y, 1))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"bare", "tdap", "full"} {
		plan := compile(t, p, rosemary(t), o)
		if plan.HostOnlyBytes != 0 {
			t.Fatalf("%s: host-only bytes %d for a program without stored data", o, plan.HostOnlyBytes)
		}
		for _, tr := range plan.Transfers {
			if plan.Program.Nodes[tr.Node].Public {
				t.Fatalf("%s: public constant %d transferred", o, tr.Node)
			}
		}
	}
}
