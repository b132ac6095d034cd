package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// runNetwork applies the stages to vals in float64 with the comparison
// cmp(d) ≈ [d > 0], carrying the payload along, exactly as Program's
// stages compute: sel = cmp(x − partner) or 1 − that by direction,
// x += sel·(partner − x).
func runNetwork(stages []CASStage, vals, pay []float64, cmp func(float64) float64) {
	n := len(vals)
	for _, st := range stages {
		nv, np := slices.Clone(vals), slices.Clone(pay)
		for i := 0; i < n; i++ {
			j := i ^ st.Dist
			s := cmp(vals[i] - vals[j])
			if !st.KeepMin(i) {
				s = 1 - s
			}
			nv[i] = vals[i] + s*(vals[j]-vals[i])
			if pay != nil {
				np[i] = pay[i] + s*(pay[j]-pay[i])
			}
		}
		copy(vals, nv)
		if pay != nil {
			copy(pay, np)
		}
	}
}

// With exact comparisons the network leaves the k smallest values,
// ascending, in the first k slots, and the payload follows them: checked
// against a sort for every width and k up to 256, brute force.
func TestNetworkTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	exact := func(d float64) float64 {
		switch {
		case d > 0:
			return 1
		case d < 0:
			return 0
		}
		return 0.5
	}
	for w := 2; w <= 256; w *= 2 {
		for k := 1; k <= w; k *= 2 {
			for trial := 0; trial < 5; trial++ {
				vals := make([]float64, w)
				pay := make([]float64, w)
				for i := range vals {
					vals[i] = float64(r.IntN(1 << 20))
					pay[i] = vals[i] + 0.25 // the payload names its record
				}
				want := slices.Clone(vals)
				slices.Sort(want)
				runNetwork(Network(w, k), vals, pay, exact)
				for i := 0; i < k; i++ {
					if vals[i] != want[i] || pay[i] != want[i]+0.25 {
						t.Fatalf("width %d top-%d: slot %d holds %g (payload %g), want %g", w, k, i, vals[i], pay[i], want[i])
					}
				}
			}
			lk := log2i(k)
			if got, want := len(Network(w, k)), lk*(lk+1)/2+(log2i(w)-lk)*(1+lk); got != want {
				t.Fatalf("width %d top-%d: %d stages, want %d", w, k, got, want)
			}
		}
	}
}

func log2i(x int) int { return int(math.Log2(float64(x))) }

// The Chebyshev interpolant of the step function evaluates by Clenshaw
// like its T_i sum, and its split p = q·T_m + r is exact.
func TestStepChebyshev(t *testing.T) {
	p := StepChebyshev(247)
	if p.Degree() != 247 {
		t.Fatalf("degree %d", p.Degree())
	}
	direct := func(q Chebyshev, x float64) float64 {
		var s float64
		for i, c := range q.Coeffs {
			s += c * math.Cos(float64(i)*math.Acos(x))
		}
		return s
	}
	for _, x := range []float64{-0.9, -0.3, -0.05, 0.05, 0.3, 0.9} {
		if got, want := p.Eval(x), direct(p, x); math.Abs(got-want) > 1e-9 {
			t.Fatalf("p(%g): Clenshaw %g, sum %g", x, got, want)
		}
		q, r := p.split(128)
		tm := math.Cos(128 * math.Acos(x))
		if got := q.Eval(x)*tm + r.Eval(x); math.Abs(got-p.Eval(x)) > 1e-9 {
			t.Fatalf("split at %g: %g, want %g", x, got, p.Eval(x))
		}
	}
	// Away from the jump it is a step.
	for _, x := range []float64{-0.8, -0.2, 0.2, 0.8} {
		want := 0.0
		if x > 0 {
			want = 1
		}
		if math.Abs(p.Eval(x)-want) > 0.02 {
			t.Fatalf("step(%g) ≈ %g", x, p.Eval(x))
		}
	}
}

// The small Engorgio query runs for real (insecure-test-deep, N=2^12,
// 2048 records in the 2048 slots): squared distances over 2 columns, then
// the first two compare-and-swap stages of the top-4 network with a
// degree-7 Chebyshev step, the 2 payload columns synced. The decrypted
// distances and payload match a float64 run of the same algebra
// (runNetwork with the same step polynomial) within CKKS precision.
func TestEngorgioSmallDecrypts(t *testing.T) {
	shape := EngorgioSmall("vq1-small", 4)
	p, err := shape.Program()
	if err != nil {
		t.Fatal(err)
	}
	r := newCKKSRun(t, shape.Params)
	slots := r.Params.MaxSlots()
	if shape.Width() != slots {
		t.Fatalf("width %d, %d slots", shape.Width(), slots)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	cols := make([][]float64, shape.Dims)
	query := make([][]float64, shape.Dims)
	dist := make([]float64, slots)
	for c := range cols {
		cols[c] = make([]float64, slots)
		query[c] = make([]float64, slots)
		q := 0.35 * rng.Float64()
		for i := range cols[c] {
			cols[c][i] = 0.35 * rng.Float64()
			query[c][i] = q
			dist[i] += (cols[c][i] - q) * (cols[c][i] - q)
		}
	}
	pay := make([][]float64, shape.Sync)
	for c := range pay {
		pay[c] = make([]float64, slots)
		for i := range pay[c] {
			pay[c][i] = float64(i%97)/97 - 0.5
		}
	}
	ones := make([]float64, slots)
	for i := range ones {
		ones[i] = 1
	}
	vecs := map[string][][]float64{"columns/distance": cols, "query": query, "columns/payload": pay, "ones": {ones}}
	stages := shape.Stages()
	for j, st := range stages {
		for _, kind := range []string{"up", "dn", "min", "max"} {
			m, err := shape.StageMask(st, kind, slots)
			if err != nil {
				t.Fatal(err)
			}
			vecs[StageMaskName(j, kind)] = [][]float64{m}
		}
	}
	out := r.run(t, p, vecs)

	want := slices.Clone(dist)
	wantPay := make([][]float64, shape.Sync)
	for c := range wantPay {
		// Each payload column follows the distance column's selections:
		// run the network on (distance, payload c) pairs.
		d := slices.Clone(dist)
		wantPay[c] = slices.Clone(pay[c])
		runNetwork(stages, d, wantPay[c], shape.Step.Eval)
		if c == 0 {
			want = d
		}
	}
	got := r.Decrypt(t, out["topk"][0].Ct)
	var worst float64
	for i := range want {
		worst = max(worst, math.Abs(got[i]-want[i]))
	}
	if worst > 1e-3 {
		t.Fatalf("distances after %d stages differ from the float64 run by up to %g", len(stages), worst)
	}
	for c := range wantPay {
		g := r.Decrypt(t, out["sync"][c].Ct)
		for i := range g {
			if math.Abs(g[i]-wantPay[c][i]) > 1e-3 {
				t.Fatalf("payload %d slot %d: %g, want %g", c, i, g[i], wantPay[c][i])
			}
		}
	}
	t.Logf("max error %g over %d slots after %d stages", worst, len(want), len(stages))
}

// Every VQ variant at paper scale on Engorgio's layout: one ciphertext per
// column, a bitonic network of the expected length whose rotations are all
// ±2^i, the distance and the selection bits bootstrapped at every stage (a
// stage takes 12 of the 28 levels bootstrapping leaves, below Engorgio's
// 23), the payload columns every third stage (2 levels each), and the
// top-k and synced columns as outputs.
func TestEngorgioFullShapes(t *testing.T) {
	for _, c := range []struct {
		name              string
		topK, sync, width int
	}{
		{"vecsearch-vq1-s", 4, 9, 16384},
		{"vecsearch-vq1-l", 4, 9, 65536},
		{"vecsearch-vq2-s", 16, 5, 16384},
		{"vecsearch-vq2-l", 16, 5, 65536},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Program(c.name)
			if err != nil {
				t.Fatal(err)
			}
			lk, lw := log2i(c.topK), log2i(c.width)
			stages := lk*(lk+1)/2 + (lw-lk)*(1+lk)
			bootsD, bootsSync := 0, 0
			outputs := map[string]bool{}
			for _, n := range p.Nodes {
				switch n.Op {
				case ir.OpBoot:
					if n.Level != 28 {
						t.Fatalf("boot to level %d", n.Level)
					}
					switch n.Count {
					case 1:
						bootsD++
					case int64(c.sync):
						bootsSync++
					default:
						t.Fatalf("boot of %d instances", n.Count)
					}
				case ir.OpHRot:
					r := n.Rotation
					if r < 0 {
						r = -r
					}
					if r == 0 || r&(r-1) != 0 || r >= c.width {
						t.Fatalf("rotation by %d", n.Rotation)
					}
				case ir.OpInput:
					if n.Name == "query" && n.Count != 8 {
						t.Fatalf("query of %d ciphertexts", n.Count)
					}
				case ir.OpStored:
					if n.Name == "columns/distance" && (n.Count != 8 || n.Level != 28) ||
						n.Name == "columns/payload" && n.Count != int64(c.sync) {
						t.Fatalf("stored %s: %d at level %d", n.Name, n.Count, n.Level)
					}
				case ir.OpOutput:
					outputs[n.Name] = true
				}
			}
			if bootsD != 2*stages {
				t.Errorf("%d bootstraps of the distances and selections for %d stages", bootsD, stages)
			}
			if want := stages / 3; bootsSync != want {
				t.Errorf("%d bootstraps of the payload for %d stages, want %d", bootsSync, stages, want)
			}
			if !outputs["topk"] || !outputs["sync"] {
				t.Errorf("outputs %v", outputs)
			}
		})
	}
}
