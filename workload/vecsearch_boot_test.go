package workload_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/utils"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/ir"
	"github.com/rosemary-fhe/rosemary/workload"
)

// runPhased runs p with engine.Executor, which has no host bootstrapping,
// by cutting it at its Boot nodes: phase k holds the nodes after k
// bootstrappings on their longest path; values crossing a phase boundary
// become Outputs of one phase and Inputs of the next, and each Boot node's
// instances are bootstrapped by boot in between.
func runPhased(t *testing.T, e *env, p *ir.Program, in, st map[string][]engine.Value,
	boot func(*rlwe.Ciphertext) (*rlwe.Ciphertext, error)) (map[string][]engine.Value, int) {
	t.Helper()
	phase := make([]int, len(p.Nodes))
	last := 0
	for i, n := range p.Nodes {
		for _, a := range n.Args {
			phase[i] = max(phase[i], phase[a])
		}
		if n.Op == ir.OpBoot {
			phase[i]++
		}
		last = max(last, phase[i])
	}
	users := p.Users()
	vals := map[int][]engine.Value{}
	final := map[string][]engine.Value{}
	boots := 0
	for ph := 0; ph <= last; ph++ {
		for i, n := range p.Nodes {
			if n.Op != ir.OpBoot || phase[i] != ph {
				continue
			}
			for _, v := range vals[n.Args[0]] {
				ct, err := boot(v.Ct)
				if err != nil {
					t.Fatalf("node %d: bootstrap: %v", i, err)
				}
				if ct.Level() != n.Level {
					t.Fatalf("node %d: bootstrapped to level %d, program says %d", i, ct.Level(), n.Level)
				}
				vals[i] = append(vals[i], engine.Value{Ct: ct})
				boots++
			}
		}
		b := ir.NewBuilder(fmt.Sprintf("%s/phase%d", p.Name, ph), p.Nodes[0].Params)
		subIn, subSt := map[string][]engine.Value{}, map[string][]engine.Value{}
		remap := map[int]int{}
		get := func(a int) int {
			if id, ok := remap[a]; ok {
				return id
			}
			an := p.Nodes[a]
			var id int
			switch an.Op {
			case ir.OpInput:
				id = b.InputN(an.Name, an.Level, an.Count)
				subIn[an.Name] = in[an.Name]
			case ir.OpStored:
				id = b.Stored(an.Name, an.Level, an.Count, an.Degree == 0)
				subSt[an.Name] = st[an.Name]
			default: // computed in an earlier phase, or bootstrapped
				name := fmt.Sprintf("v%d", a)
				id = b.InputN(name, an.Level, an.Count)
				subIn[name] = vals[a]
			}
			remap[a] = id
			return id
		}
		nodes := 0
		for i, n := range p.Nodes {
			if phase[i] != ph || n.Op == ir.OpInput || n.Op == ir.OpStored || n.Op == ir.OpBoot {
				continue
			}
			c := n
			c.Args = nil
			for _, a := range n.Args {
				c.Args = append(c.Args, get(a))
			}
			remap[i] = b.Append(c)
			nodes++
			for _, u := range users[i] {
				if phase[u] > ph {
					b.Output(fmt.Sprintf("v%d", i), remap[i])
					break
				}
			}
		}
		if nodes == 0 {
			continue
		}
		sub, err := b.Build()
		if err != nil {
			t.Fatalf("phase %d: %v", ph, err)
		}
		out := e.run(t, sub, subIn, subSt)
		for i, n := range p.Nodes {
			if phase[i] != ph {
				continue
			}
			if n.Op == ir.OpOutput {
				final[n.Name] = out[n.Name]
			} else if v, ok := out[fmt.Sprintf("v%d", i)]; ok {
				vals[i] = v
			}
		}
	}
	return final, boots
}

// withBootstrapping sets shape.Boot to Lattigo v6's default bootstrapping
// over shape's parameters and returns a key set (sized on the program built
// first with a placeholder spec), the program and the bootstrapping
// evaluator.
func withBootstrapping(t *testing.T, shape *workload.VecSearchShape) (*env, *ir.Program, *bootstrapping.Evaluator) {
	t.Helper()
	pr0 := *shape
	pr0.Boot = &ir.BootSpec{OutputLevel: 5}
	p0, err := pr0.Program()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, p0, true)
	btp, err := bootstrapping.NewParametersFromLiteral(e.Params, bootstrapping.ParametersLiteral{LogN: utils.Pointy(e.Params.LogN())})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := compiler.BootSpecFromLattigo(btp)
	if err != nil {
		t.Fatal(err)
	}
	shape.Boot = &spec
	p, err := shape.Program()
	if err != nil {
		t.Fatal(err)
	}
	evk, _, err := btp.GenEvaluationKeys(e.SK)
	if err != nil {
		t.Fatal(err)
	}
	eval, err := bootstrapping.NewEvaluator(btp, evk)
	if err != nil {
		t.Fatal(err)
	}
	return e, p, eval
}

// The small VQ1 query with bootstrapping, for real: insecure-test (N=2^11,
// 5 levels) as Lattigo's residual parameters, bootstrapped with Lattigo v6's
// default circuit at N=2^11; 1024 MNIST images (one per slot, 196
// ciphertexts). The distances are bootstrapped before the comparisons and
// every comparison again between g3 and f3 (each takes 3 of the 5 levels);
// the decrypted signs pass the same checks as without bootstrapping.
func TestVecSearchSmallWithBootstrapping(t *testing.T) {
	if testing.Short() {
		t.Skip("bootstrapping key generation and four bootstrappings")
	}
	shape := workload.VecSearchSmall("vq1-boot", 4)
	shape.Params, shape.DBLevel = "insecure-test", 5
	e, p, eval := withBootstrapping(t, &shape)
	if shape.Boot.OutputLevel != 5 {
		t.Fatalf("bootstrapping leaves level %d", shape.Boot.OutputLevel)
	}
	in, st, dist := vecsearchData(t, shape, e)
	out, boots := runPhased(t, e, p, in, st, eval.Bootstrap)
	// One bootstrapping of the distances, one per comparison between the
	// two sign polynomials.
	if boots != 1+(shape.Way-1) {
		t.Fatalf("%d bootstrappings", boots)
	}
	checkComparisons(t, shape, dist, e, out)
}

// Two rounds of the 4-way tournament with selection, for real with
// bootstrapping (insecure-test, Lattigo's default bootstrapping at N=2^11):
// after round r every group of 4^(r+1) entries holds its minimum distance in
// its first slot. The decrypted group minima match a float64 run of the same
// algebra (exact comparisons replaced by the composite f3∘f3∘g3∘g3), and,
// where every comparison on the way is clear-cut, the true minimum.
func TestVecSearchSmallTopKWithBootstrapping(t *testing.T) {
	if testing.Short() {
		t.Skip("bootstrapping key generation and some twenty bootstrappings")
	}
	shape := workload.VecSearchShape{
		Name: "vq1-topk-boot", Params: "insecure-test", Entries: 1024, Dim: 196, Way: 4, Rounds: 2,
		Sign: []workload.SignPoly{workload.SignG3, workload.SignG3, workload.SignF3, workload.SignF3}, DBLevel: 5, Select: true,
	}
	// Measured: all 64 groups (the float64 run of the algebra finds all 64).
	topKWithBootstrapping(t, shape, 60)
}

// The same with the paper-scale layout's block packing: 256 entries in 4
// blocks of the 1024 slots, the 3 comparisons of a round in one ciphertext
// (blocks 0–2) and block 3 padded, block products by rotations.
func TestVecSearchSmallTopKBlocksWithBootstrapping(t *testing.T) {
	if testing.Short() {
		t.Skip("bootstrapping key generation and bootstrappings")
	}
	shape := workload.VecSearchShape{
		Name: "vq1-topk-blocks", Params: "insecure-test", Entries: 256, Dim: 196, Way: 4, Rounds: 2,
		Sign: []workload.SignPoly{workload.SignG3, workload.SignG3, workload.SignF3, workload.SignF3}, DBLevel: 5,
		Masks: true, Select: true,
	}
	// Measured: all 16 groups.
	topKWithBootstrapping(t, shape, 15)
}

// topKWithBootstrapping runs shape (with Lattigo's default bootstrapping
// over its parameters) on MNIST and checks the group minima.
func topKWithBootstrapping(t *testing.T, shape workload.VecSearchShape, wantExact int) {
	t.Helper()
	lay, err := shape.Layout()
	if err != nil {
		t.Fatal(err)
	}
	e, p, eval := withBootstrapping(t, &shape)
	in, st, dist := vecsearchData(t, shape, e)
	for _, n := range p.Nodes {
		if n.Op != ir.OpStored || n.Name == "database" {
			continue
		}
		var vals []float64
		if n.Name == "ones" {
			vals = make([]float64, lay.Slots)
			for i := range vals {
				vals[i] = 1
			}
		} else {
			var r, j int
			var kind string
			if _, err := fmt.Sscanf(n.Name, "mask/%d/%d/%s", &r, &j, &kind); err != nil {
				t.Fatalf("stored %q: %v", n.Name, err)
			}
			if vals, err = shape.MaskValues(lay, r, j, kind); err != nil {
				t.Fatal(err)
			}
		}
		pt := e.Encode(t, vals, n.Level)
		v := engine.Value{Pt: pt}
		if n.Degree == 1 {
			v = engine.Value{Ct: e.Encrypt(t, pt)}
		}
		st[n.Name] = []engine.Value{v}
	}
	out, boots := runPhased(t, e, p, in, st, eval.Bootstrap)
	got := e.Decrypt(t, out["topk"][0].Ct)

	// The same algebra in float64.
	k, n := shape.Way, lay.E
	ref := append([]float64(nil), dist...)
	clear := make([]bool, n) // every comparison feeding slot i was clear-cut
	for i := range clear {
		clear[i] = true
	}
	stride := 1
	for r := 0; r < lay.Rounds; r++ {
		best := make([]float64, n)
		ok := make([]bool, n)
		for i := 0; i < n; i++ {
			pos := i / stride % k
			w := math.Ldexp(1, -(k - 1))
			if shape.Masks {
				// Blocks without a comparison hold 1.
				w = math.Ldexp(1, -lay.Packed*lay.Blocks)
				for b := k - 1; b < lay.Packed*lay.Blocks; b++ {
					w *= 1 - workload.EvalComposite(shape.Sign, ref[i]-1)
				}
			}
			ok[i] = clear[i]
			for j := 1; j < k; j++ {
				partner := (i + j*stride) % n
				if pos+j >= k {
					partner = (i - (k-j)*stride + n) % n
				}
				c := workload.EvalComposite(shape.Sign, ref[i]-ref[partner])
				ok[i] = ok[i] && clear[partner] && math.Abs(c) > 0.99
				w *= 1 - c
			}
			best[i] = w * ref[i]
		}
		next := make([]float64, n)
		for i := 0; i < n; i++ {
			for m := 0; m < k; m++ {
				next[i] += best[(i+m*stride)%n]
				clear[i] = clear[i] && ok[(i+m*stride)%n]
			}
		}
		ref = next
		stride *= k
	}
	var maxErr float64
	clearGroups, exact := 0, 0
	for g := 0; g < n; g += stride {
		trueMin := dist[g]
		for i := g; i < g+stride; i++ {
			trueMin = math.Min(trueMin, dist[i])
		}
		if math.Abs(got[g]-trueMin) <= 1e-2 {
			exact++
		}
		maxErr = math.Max(maxErr, math.Abs(got[g]-ref[g]))
		if math.Abs(got[g]-ref[g]) > 1e-2 {
			t.Fatalf("group %d: decrypted minimum %.5f, float64 run %.5f", g/stride, got[g], ref[g])
		}
		if !clear[g] {
			continue
		}
		clearGroups++
		if math.Abs(got[g]-trueMin) > 1e-2 {
			t.Fatalf("group %d: decrypted minimum %.5f, true minimum %.5f", g/stride, got[g], trueMin)
		}
	}
	if clearGroups == 0 || exact < wantExact {
		t.Fatalf("%d clear-cut groups, %d of %d with the true minimum", clearGroups, exact, n/stride)
	}
	t.Logf("%d bootstrappings; %d groups of %d: max error %.2e vs float64, %d hold the true minimum (±0.01), %d clear-cut",
		boots, n/stride, stride, maxErr, exact, clearGroups)
}
