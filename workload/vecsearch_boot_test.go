package workload_test

import (
	"fmt"
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
	// Build the program first with a placeholder spec to size the keys.
	pr0 := shape
	pr0.Boot = &ir.BootSpec{OutputLevel: 5}
	p0, err := pr0.Program()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, p0, true)
	btp, err := bootstrapping.NewParametersFromLiteral(e.params, bootstrapping.ParametersLiteral{LogN: utils.Pointy(e.params.LogN())})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := compiler.BootSpecFromLattigo(btp)
	if err != nil {
		t.Fatal(err)
	}
	if spec.OutputLevel != 5 {
		t.Fatalf("bootstrapping leaves level %d", spec.OutputLevel)
	}
	shape.Boot = &spec
	p, err := shape.Program()
	if err != nil {
		t.Fatal(err)
	}
	evk, _, err := btp.GenEvaluationKeys(e.sk)
	if err != nil {
		t.Fatal(err)
	}
	eval, err := bootstrapping.NewEvaluator(btp, evk)
	if err != nil {
		t.Fatal(err)
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
