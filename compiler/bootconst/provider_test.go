package bootconst_test

import (
	"context"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/bootconst"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/tools/crosscheck"
)

// bootPreset names the moduli chain of the logN-10 test bootstrapping.
var bootPreset = bootconst.TestPreset(10)

// fixture is NewTestKeySet with shorter names.
type fixture struct {
	btp    bootstrapping.Parameters
	params ckks.Parameters
	sk     *rlwe.SecretKey
	keys   engine.Keys
	ev     *bootstrapping.Evaluator
	prov   *bootconst.Provider
	spec   ir.BootSpec
	ecd    *ckks.Encoder
	ks     *bootconst.KeySet
}

func newFixture(t testing.TB, logSlots int) *fixture { return newFixtureN(t, 10, logSlots) }

func newFixtureN(t testing.TB, logN, logSlots int) *fixture {
	t.Helper()
	k, err := bootconst.NewTestKeySet(logN, logSlots)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{btp: k.Btp, params: k.Params, sk: k.Sk, keys: k.Keys, ev: k.Eval, prov: k.Provider, spec: k.Spec,
		ecd: ckks.NewEncoder(k.Params), ks: k}
}

// message is the test vector and its encryption at level 0 (the input
// level of Lattigo's bootstrapping for these parameters).
func (f *fixture) message(t testing.TB) ([]complex128, *rlwe.Ciphertext) {
	t.Helper()
	slots := 1 << f.spec.LogSlots
	v := make([]complex128, slots)
	for i := range v {
		v[i] = complex(0.5*math.Sin(float64(i)), 0.25*math.Cos(float64(i)))
	}
	pt := ckks.NewPlaintext(f.params, 0)
	pt.LogDimensions = ring.Dimensions{Rows: 0, Cols: f.spec.LogSlots}
	if err := f.ecd.Encode(v, pt); err != nil {
		t.Fatal(err)
	}
	ct, err := rlwe.NewEncryptor(f.params, f.sk).EncryptNew(pt)
	if err != nil {
		t.Fatal(err)
	}
	return v, ct
}

// program is one Boot of the fixture's spec, expanded.
func (f *fixture) program(t testing.TB) *ir.Program {
	t.Helper()
	p, err := f.ks.Program()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run executes p with the nodes onDevice selects on the device, the
// others on the host; hoisted runs the DFT products as Lattigo's hoisted
// programs (engine.DiagonalProvider), else node by node.
func (f *fixture) run(t *testing.T, p *ir.Program, ct *rlwe.Ciphertext, onDevice func(int) bool, hoisted bool) (*rlwe.Ciphertext, *engine.Executor) {
	t.Helper()
	x, err := f.ks.Executor(onDevice, hoisted)
	if err != nil {
		t.Fatal(err)
	}
	return f.exec(t, x, p, ct), x
}

// exec runs p with x on input "x" = ct, the DFT diagonals from the
// provider, and returns output "y".
func (f *fixture) exec(t *testing.T, x *engine.Executor, p *ir.Program, ct *rlwe.Ciphertext) *rlwe.Ciphertext {
	t.Helper()
	stored, err := f.prov.Stored(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.Run(context.Background(), p, map[string][]engine.Value{"x": {{Ct: ct}}}, stored)
	if err != nil {
		t.Fatal(err)
	}
	return out["y"][0].Ct
}

func (f *fixture) maxErr(t *testing.T, ct *rlwe.Ciphertext, want []complex128) float64 {
	t.Helper()
	got := make([]complex128, len(want))
	if err := f.ecd.Decode(rlwe.NewDecryptor(f.params, f.sk).DecryptNew(ct), got); err != nil {
		t.Fatal(err)
	}
	e := 0.0
	for i := range got {
		e = math.Max(e, cmplx.Abs(got[i]-want[i]))
	}
	return e
}

func allOnDevice(int) bool { return true }

// TestBootstrapOnInterpreter runs a whole bootstrapping (Lattigo's default
// circuit at logN 10, full slots) with every operation on the device
// interpreter and the real constants, and decrypts it against the
// plaintext; Lattigo's own bootstrapping of the same ciphertext sets the
// precision bar. The host run of the same program (Lattigo's arithmetic
// node by node) gives the same ciphertext bit for bit.
func TestBootstrapOnInterpreter(t *testing.T) {
	for _, tc := range []struct {
		name           string
		logN, logSlots int
	}{
		{"logN10-full-slots", 10, 9},
		// Sparse slots add the trace over the unused slots (ModUp) and the
		// repacking rotation (CoeffsToSlots).
		{"logN10-64-slots", 10, 6},
		{"logN11-full-slots", 11, 10},
		{"logN12-full-slots", 12, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.logN > 11 && testing.Short() {
				t.Skip("logN 12 takes seconds; run without -short")
			}
			bootstrapOnInterpreter(t, tc.logN, tc.logSlots)
		})
	}
}

func bootstrapOnInterpreter(t *testing.T, logN, logSlots int) {
	f := newFixtureN(t, logN, logSlots)
	want, ct := f.message(t)
	p := f.program(t)
	ref, err := f.ev.Evaluate(ct.CopyNew())
	if err != nil {
		t.Fatal(err)
	}
	refErr := f.maxErr(t, ref, want)
	if refErr > 1e-3 {
		t.Fatalf("Lattigo's own bootstrapping error is %.3g: the parameters do not bootstrap", refErr)
	}
	for _, hoisted := range []bool{true, false} {
		dev, x := f.run(t, p, ct.CopyNew(), allOnDevice, hoisted)
		if x.Stats.DeviceOps == 0 || x.Stats.HostOps != 0 {
			t.Fatalf("device ops %d, host ops %d", x.Stats.DeviceOps, x.Stats.HostOps)
		}
		devErr := f.maxErr(t, dev, want)
		same := crosscheck.SameCiphertext(dev, ref)
		t.Logf("hoisted DFTs %-5v: max error interpreter %.3g (%.1f bits), Lattigo %.3g (%.1f bits), bit-exact %v; %d nodes, %d device micro-ops",
			hoisted, devErr, -math.Log2(devErr), refErr, -math.Log2(refErr), same, len(p.Nodes), x.Stats.DeviceMicroOps)
		if dev.Level() != ref.Level() {
			t.Fatalf("output level %d, Lattigo's %d", dev.Level(), ref.Level())
		}
		if devErr > 1e-3 || devErr > 2*refErr {
			t.Fatalf("interpreter bootstrapping error %.3g, Lattigo's %.3g", devErr, refErr)
		}
		// With the DFT products run as Lattigo runs them, every step is
		// Lattigo's to the bit, and so is the whole bootstrapping.
		if hoisted && !same {
			t.Fatal("the interpreter's bootstrapping differs from Lattigo's Evaluate")
		}
	}
}

// namedNodes returns the nodes of p applying constant kind, in order.
func namedNodes(p *ir.Program, kind lower.BootConstKind) []int {
	var out []int
	for _, n := range p.Nodes {
		if c, err := lower.ParseBootConst(n.Name); err == nil && c.Kind == kind {
			out = append(out, n.ID)
		}
	}
	return out
}

// traceEnd follows ModUp's trace from the node after the lift (ModUp's
// scaling, then the trace's pre-multiplication, then x + σ(x) steps) to its
// last addition: ModUp's output.
func traceEnd(p *ir.Program, id int) int {
	users := p.Users()
	for {
		next := -1
		for _, u := range users[id] {
			n := p.Nodes[u]
			switch {
			case n.Op == ir.OpCMult && strings.Contains(n.Name, string(lower.ConstTrace)):
				next = u
			case n.Op == ir.OpHAdd && p.Nodes[n.Args[1]].Op == ir.OpHRot && p.Nodes[n.Args[1]].Args[0] == id:
				next = u
			}
		}
		if next < 0 {
			return id
		}
		id = next
	}
}

// decryptDiff is the largest difference between the decodings of a and b.
func (f *fixture) decryptDiff(t *testing.T, a, b *rlwe.Ciphertext) float64 {
	t.Helper()
	dec := rlwe.NewDecryptor(f.params, f.sk)
	n := 1 << f.params.LogMaxSlots()
	va, vb := make([]complex128, n), make([]complex128, n)
	for _, c := range []struct {
		ct  *rlwe.Ciphertext
		out []complex128
	}{{a, va}, {b, vb}} {
		ct := c.ct.CopyNew()
		ct.LogDimensions = f.params.LogMaxDimensions()
		if err := f.ecd.Decode(dec.DecryptNew(ct), c.out); err != nil {
			t.Fatal(err)
		}
	}
	d := 0.0
	for i := range va {
		d = math.Max(d, cmplx.Abs(va[i]-vb[i]))
	}
	return d
}

// TestBootstrapStepsMatchLattigo runs each step of Lattigo's bootstrapping
// on the interpreter's own input to that step and compares bit for bit:
// ScaleDown, ModUp, CoeffsToSlots, EvalMod (each part) and SlotsToCoeffs,
// the DFT products as Lattigo's hoisted programs. Run node by node, the DFT
// products key-switch each rotation separately (each bit-exact with
// Lattigo's rotation) where Lattigo hoists the baby steps and defers their
// ModDown, so those steps then agree only in decryption; that node-by-node
// run equals the host run (Lattigo's arithmetic node by node) bit for bit.
func TestBootstrapStepsMatchLattigo(t *testing.T) {
	t.Run("full-slots", func(t *testing.T) { stepsMatchLattigo(t, 9) })
	t.Run("64-slots", func(t *testing.T) { stepsMatchLattigo(t, 6) })
}

func stepsMatchLattigo(t *testing.T, logSlots int) {
	f := newFixture(t, logSlots)
	_, ct := f.message(t)
	parts := 2
	if f.spec.LogSlots < f.params.LogN()-1 {
		parts = 1
	}
	p := f.program(t)
	_, x := f.run(t, p, ct.CopyNew(), allOnDevice, true)
	val := func(id int) *rlwe.Ciphertext { return x.Values[id][0].Ct.CopyNew() }
	arg := func(id int) int { // skip a LevelDown
		a := p.Nodes[id].Args[0]
		if p.Nodes[a].Op == ir.OpLevelDown {
			a = p.Nodes[a].Args[0]
		}
		return a
	}
	check := func(step string, ours, lattigo *rlwe.Ciphertext, exact bool) {
		t.Helper()
		same := crosscheck.SameCiphertext(ours, lattigo)
		d := f.decryptDiff(t, ours, lattigo)
		t.Logf("%-14s bit-exact %-5v decryptions differ by %.3g", step, same, d)
		if exact && !same {
			t.Errorf("%s is not bit-exact with Lattigo (decryptions differ by %.3g)", step, d)
		}
		if d > 1e-6 {
			t.Errorf("%s decrypts %.3g away from Lattigo's", step, d)
		}
	}

	sd := namedNodes(p, lower.ConstScaleDown)
	mu := namedNodes(p, lower.ConstModUp)
	in := namedNodes(p, lower.ConstMod1In)
	out := namedNodes(p, lower.ConstMod1Out)
	if len(sd) != 1 || len(mu) != 1 || len(in) != parts || len(out) != parts {
		t.Fatalf("expansion has %d ScaleDown, %d ModUp, %d EvalMod inputs and %d outputs", len(sd), len(mu), len(in), len(out))
	}
	want, _, err := f.ev.ScaleDown(ct.CopyNew())
	if err != nil {
		t.Fatal(err)
	}
	check("ScaleDown", val(sd[0]), want, true)
	if want, err = f.ev.ModUp(val(sd[0])); err != nil {
		t.Fatal(err)
	}
	modUp := traceEnd(p, mu[0])
	check("ModUp", val(modUp), want, true)
	re, im, err := f.ev.CoeffsToSlots(val(modUp))
	if err != nil {
		t.Fatal(err)
	}
	check("CoeffsToSlots", val(arg(in[0])), re, true)
	if parts == 2 {
		check("CoeffsToSlots", val(arg(in[1])), im, true)
	}
	for k, part := range []string{"EvalMod real", "EvalMod imag"}[:parts] {
		if want, err = f.ev.EvalMod(val(arg(in[k]))); err != nil {
			t.Fatal(err)
		}
		check(part, val(out[k]), want, true)
	}
	var imag *rlwe.Ciphertext
	if parts == 2 {
		imag = val(out[1])
	}
	if want, err = f.ev.SlotsToCoeffs(val(out[0]), imag); err != nil {
		t.Fatal(err)
	}
	check("SlotsToCoeffs", val(p.Nodes[len(p.Nodes)-1].Args[0]), want, true)

	// Node by node: the DFT products round differently from Lattigo's.
	dev, _ := f.run(t, p, ct.CopyNew(), allOnDevice, false)
	host, hx := f.run(t, p, ct.CopyNew(), nil, false)
	if hx.Stats.DeviceOps != 0 || !crosscheck.SameCiphertext(host, dev) {
		t.Fatalf("host run (device ops %d) differs from the node-by-node device run", hx.Stats.DeviceOps)
	}
	if want, err = f.ev.Evaluate(ct.CopyNew()); err != nil {
		t.Fatal(err)
	}
	if d := f.decryptDiff(t, dev, want); crosscheck.SameCiphertext(dev, want) || d > 1e-6 {
		t.Fatalf("node-by-node run: bit-exact %v with Lattigo, decryptions differ by %.3g (want rounding differences only)", crosscheck.SameCiphertext(dev, want), d)
	}
}

// TestPlanWithBootOnDevice compiles a program with a Boot node for the
// Rosemary system (CLCAO and TDAP), puts the bootstrapping on the SSD
// device, and runs the plan: the host nodes with Lattigo, the device nodes
// on the interpreter, values crossing the link where the plan cuts. The
// result decrypts to the plaintext reference.
func TestPlanWithBootOnDevice(t *testing.T) {
	f := newFixture(t, 9)
	want, ct := f.message(t)
	b := ir.NewBuilder("boot-plan", bootPreset)
	x := b.Input("x", 0)
	y := b.Boot(x, f.spec)
	b.Output("y", b.HAdd(y, b.HRot(y, 1)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	q := plan.Program
	placed := 0
	for i, n := range q.Nodes {
		if n.Segment == ir.NonLinear && n.Op != ir.OpStored {
			if plan.Placement[i] == compiler.SSD {
				placed++
			}
			plan.Placement[i] = compiler.SSD // the bootstrapping runs on the device
		}
	}
	t.Logf("CLCAO/TDAP placed %d of the bootstrapping's nodes on the SSD", placed)
	onDevice := func(i int) bool { return plan.Placement[i] == compiler.SSD }
	host, dev := 0, 0
	for i, n := range q.Nodes {
		switch n.Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput:
		default:
			if onDevice(i) {
				dev++
			} else {
				host++
			}
		}
	}
	if host == 0 || dev == 0 {
		t.Fatalf("plan runs %d nodes on the host and %d on the device; the test wants both", host, dev)
	}
	// Keys for every rotation of the plan (CLCAO may rewrite rotations).
	kg := rlwe.NewKeyGenerator(f.params)
	keys := engine.Keys{Relin: f.keys.Relin, Galois: map[uint64]*rlwe.GaloisKey{}}
	for _, g := range engine.GaloisElements(f.params.Parameters, q) {
		if k, ok := f.keys.Galois[g]; ok {
			keys.Galois[g] = k
		} else {
			keys.Galois[g] = kg.GenGaloisKeyNew(g, f.sk)
		}
	}
	pr, _ := fhe.Lookup(bootPreset)
	ex, err := engine.NewExecutor(pr, f.params, keys)
	if err != nil {
		t.Fatal(err)
	}
	ex.OnDevice, ex.Constants, ex.Diagonals = onDevice, f.prov, f.prov
	got := f.exec(t, ex, q, ct)
	if ex.Stats.BytesToDevice == 0 || ex.Stats.BytesFromDevice == 0 {
		t.Fatalf("no value crossed the link: %+v", ex.Stats)
	}
	n := len(want)
	ref := make([]complex128, n)
	for i := range ref {
		ref[i] = want[i] + want[(i+1)%n]
	}
	e := f.maxErr(t, got, ref)
	t.Logf("host %d nodes, device %d nodes (%d micro-ops), %d B to the device, %d B back; max error %.3g",
		host, dev, ex.Stats.DeviceMicroOps, ex.Stats.BytesToDevice, ex.Stats.BytesFromDevice, e)
	if e > 1e-3 {
		t.Fatalf("plan with the bootstrapping on the device: max error %.3g", e)
	}
}

// TestConstantsAndMixedAdditionsMatchLattigo: the lowered operations the
// expansion adds, each run on the interpreter against Lattigo's call on the
// same ciphertexts — × −i and × i (the two halves of the NTT vector
// differ), and additions and subtractions of a degree-2 product and a
// degree-1 ciphertext in either order — are bit-exact.
func TestConstantsAndMixedAdditionsMatchLattigo(t *testing.T) {
	f := newFixture(t, 9)
	level := 5
	enc := func(seed float64, scale rlwe.Scale) *rlwe.Ciphertext {
		v := make([]complex128, f.params.MaxSlots())
		for i := range v {
			v[i] = complex(math.Sin(seed+float64(i)), math.Cos(seed*float64(i)))
		}
		pt := ckks.NewPlaintext(f.params, level)
		pt.Scale = scale
		if err := f.ecd.Encode(v, pt); err != nil {
			t.Fatal(err)
		}
		ct, err := rlwe.NewEncryptor(f.params, f.sk).EncryptNew(pt)
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	// c has the product's scale: Lattigo adds operands of different scales
	// only after an integer scale-matching multiplication.
	a, b := enc(1, f.params.DefaultScale()), enc(2, f.params.DefaultScale())
	c := enc(3, f.params.DefaultScale().Mul(f.params.DefaultScale()))
	ev := ckks.NewEvaluator(f.params, rlwe.NewMemEvaluationKeySet(f.keys.Relin))
	pr, _ := fhe.Lookup(bootPreset)
	run := func(p *ir.Program) *rlwe.Ciphertext {
		t.Helper()
		x, err := engine.NewExecutor(pr, f.params, f.keys)
		if err != nil {
			t.Fatal(err)
		}
		x.OnDevice, x.Constants = allOnDevice, f.prov
		out, err := x.Run(context.Background(), p, map[string][]engine.Value{"a": {{Ct: a}}, "b": {{Ct: b}}, "c": {{Ct: c}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if x.Stats.DeviceOps == 0 {
			t.Fatal("nothing ran on the device")
		}
		return out["y"][0].Ct
	}
	node := func(id int, op ir.Op, level, degree int, args ...int) ir.Node {
		return ir.Node{ID: id, Op: op, Args: args, Params: bootPreset, Level: level, Degree: degree, Count: 1}
	}
	for _, k := range []lower.BootConstKind{lower.ConstMinusI, lower.ConstI} {
		mul := node(1, ir.OpCMult, level, 1, 0)
		mul.Constant, mul.Name = 1, lower.BootConst{Kind: k}.String()
		in := node(0, ir.OpInput, level, 1)
		in.Name = "a"
		out := node(2, ir.OpOutput, level, 1, 1)
		out.Name = "y"
		got := run(&ir.Program{Name: "const", Nodes: []ir.Node{in, mul, out}})
		v := complex(0, 1)
		if k == lower.ConstMinusI {
			v = -v
		}
		want, err := ev.MulNew(a, v)
		if err != nil {
			t.Fatal(err)
		}
		if !crosscheck.SameCiphertext(got, want) {
			t.Errorf("× %s differs from Lattigo's", k)
		}
	}
	for _, tc := range []struct {
		op           ir.Op
		productFirst bool
	}{{ir.OpHAdd, true}, {ir.OpHAdd, false}, {ir.OpHSub, true}, {ir.OpHSub, false}} {
		ia, ib, ic := node(0, ir.OpInput, level, 1), node(1, ir.OpInput, level, 1), node(2, ir.OpInput, level, 1)
		ia.Name, ib.Name, ic.Name = "a", "b", "c"
		prod := node(3, ir.OpHMult, level, 2, 0, 1)
		sum := node(4, tc.op, level, 2, 3, 2)
		if !tc.productFirst {
			sum.Args = []int{2, 3}
		}
		rl := node(5, ir.OpRelinearize, level, 1, 4)
		out := node(6, ir.OpOutput, level, 1, 5)
		out.Name = "y"
		got := run(&ir.Program{Name: "mixed", Nodes: []ir.Node{ia, ib, ic, prod, sum, rl, out}})
		p, err := ev.MulNew(a, b)
		if err != nil {
			t.Fatal(err)
		}
		x, y := p, c
		if !tc.productFirst {
			x, y = c, p
		}
		var s *rlwe.Ciphertext
		if tc.op == ir.OpHAdd {
			s, err = ev.AddNew(x, y)
		} else {
			s, err = ev.SubNew(x, y)
		}
		if err != nil {
			t.Fatal(err)
		}
		want, err := ev.RelinearizeNew(s)
		if err != nil {
			t.Fatal(err)
		}
		if !crosscheck.SameCiphertext(got, want) {
			t.Errorf("%s (product first %v) differs from Lattigo's", tc.op, tc.productFirst)
		}
	}
}
