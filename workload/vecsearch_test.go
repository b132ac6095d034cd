package workload_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/ir"
	"github.com/rosemary-fhe/rosemary/workload"
)

// The published constants: f3(±1) = ±1, both odd, and the composites used
// by the workloads decide every input of magnitude ≥ 2^-4 (Full) and
// ≥ 0.3 (Small) to within 0.1 of ±1.
func TestSignPolynomials(t *testing.T) {
	if got := workload.SignF3.Eval(1); math.Abs(got-1) > 1e-12 {
		t.Fatalf("f3(1) = %v", got)
	}
	for _, x := range []float64{0.01, 0.2, 0.7, 1} {
		for _, p := range []workload.SignPoly{workload.SignF3, workload.SignG3} {
			if p.Eval(-x) != -p.Eval(x) || p.Eval(x) <= 0 {
				t.Fatalf("%s(±%v) = %v, %v", p.Name, x, p.Eval(x), p.Eval(-x))
			}
		}
	}
	full := workload.VecSearchFull("x", 4, 128).Sign
	small := workload.VecSearchSmall("x", 4).Sign
	for x := 1.0 / 16; x <= 1; x += 1.0 / 256 {
		if v := workload.EvalComposite(full, x); math.Abs(v-1) > 0.1 {
			t.Fatalf("full composite(%v) = %v", x, v)
		}
	}
	for x := 0.3; x <= 1; x += 1.0 / 256 {
		if v := workload.EvalComposite(small, x); math.Abs(v-1) > 0.1 {
			t.Fatalf("small composite(%v) = %v", x, v)
		}
	}
}

// The small VQ1 query runs for real on ckks-14 over 1024 MNIST images:
// encrypted distances, synchronisation across blocks and one round of
// 4-way comparisons through the composite sign f3∘g3. Every decrypted
// comparison matches the plaintext composite, every clear-cut comparison
// has the right sign, and the 4-way group minima read from the encrypted
// comparisons are the plaintext ones.
func TestVecSearchSmallComparisons(t *testing.T) {
	shape := workload.VecSearchSmall("vq1-small", 4)
	p, err := shape.Program()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, p, true)
	in, st, dist := vecsearchData(t, shape, e)
	checkComparisons(t, shape, dist, e, e.run(t, p, in, st))
}

// vecsearchData encrypts 1024 pooled MNIST images (the database) and a test
// image (the query) in the shape's layout and returns the plaintext squared
// distances, scaled as the ciphertexts are.
func vecsearchData(t *testing.T, shape workload.VecSearchShape, e *env) (in, st map[string][]engine.Value, dist []float64) {
	t.Helper()
	train, test := mnist(t)
	lay, err := shape.Layout()
	if err != nil {
		t.Fatal(err)
	}
	n := int(shape.Entries)
	db := make([][]float64, n)
	for i := range db {
		db[i] = pooled(train[i])
	}
	query := pooled(test[0])
	dist = make([]float64, n)
	var maxD float64
	for i, x := range db {
		for k := range x {
			dist[i] += (x[k] - query[k]) * (x[k] - query[k])
		}
		maxD = math.Max(maxD, dist[i])
	}
	// Scale the pixels so that every squared distance is below 1 (the
	// comparison's input range); Engorgio's quantised encoding plays this
	// role.
	scale := 1 / math.Sqrt(maxD*1.05)
	for i := range dist {
		dist[i] *= scale * scale
	}
	layout := func(vec func(e int) []float64) []engine.Value {
		var out []engine.Value
		for c := 0; c < lay.Cts; c++ {
			v := make([]float64, lay.Slots)
			for b := 0; b < lay.Blocks; b++ {
				k := b*lay.Cts + c
				if k >= shape.Dim {
					continue
				}
				for i := 0; i < lay.E; i++ {
					if x := vec(i); x != nil {
						v[b*lay.E+i] = x[k] * scale
					}
				}
			}
			out = append(out, engine.Value{Ct: e.Encrypt(t, e.Encode(t, v, shape.DBLevel))})
		}
		return out
	}
	st = map[string][]engine.Value{"database": layout(func(i int) []float64 {
		if i < n {
			return db[i]
		}
		return nil
	})}
	in = map[string][]engine.Value{"query": layout(func(int) []float64 { return query })}
	return in, st, dist
}

// checkComparisons checks the decrypted signs of one round of way-way
// comparisons: every value matches the plaintext composite, every
// clear-cut comparison has the right sign, and the group minima read from
// the encrypted comparisons are the plaintext ones.
func checkComparisons(t *testing.T, shape workload.VecSearchShape, dist []float64, e *env, out map[string][]engine.Value) {
	t.Helper()
	lay, err := shape.Layout()
	if err != nil {
		t.Fatal(err)
	}
	n := int(shape.Entries)
	// Scales drift by the primes' distance from 2^40 (terms of a sum carry
	// slightly different scales), amplified ≈10× by the composite near 0.
	const tol = 5e-3
	sgn := make([][]float64, shape.Way)
	var maxErr float64
	clear, wrong := 0, 0
	for j := 1; j < shape.Way; j++ {
		got := e.Decrypt(t, out[fmt.Sprintf("signs/%d", j-1)][0].Ct)
		sgn[j] = got[:lay.E]
		for i := 0; i < lay.E; i++ {
			diff := dist[i%n] - dist[(i+j)%lay.E%n]
			if i >= n || (i+j)%lay.E >= n {
				continue // padding slots
			}
			ref := workload.EvalComposite(shape.Sign, diff)
			maxErr = math.Max(maxErr, math.Abs(got[i]-ref))
			if math.Abs(got[i]-ref) > tol {
				t.Fatalf("offset %d slot %d: %.6f, plaintext composite %.6f (difference %.4f)", j, i, got[i], ref, diff)
			}
			if math.Abs(ref) > 0.5 {
				clear++
				if (got[i] > 0) != (diff > 0) {
					wrong++
				}
			}
		}
	}
	if wrong > 0 || clear < lay.E {
		t.Fatalf("%d of %d clear-cut comparisons have the wrong sign", wrong, clear)
	}
	// Group minima from the encrypted comparisons: entry i of its group
	// wins when it is below each partner; sign(d_i − d_{i−m}) is
	// −sign_m(i−m).
	cmp := func(i, l int) float64 { // ≈ sign(d_i − d_l) for i ≠ l
		if l > i {
			return sgn[l-i][i]
		}
		return -sgn[i-l][l]
	}
	groups, checked := 0, 0
	for g := 0; g+shape.Way <= n; g += shape.Way {
		groups++
		want, decided := g, true
		for i := g; i < g+shape.Way; i++ {
			if dist[i] < dist[want] {
				want = i
			}
			for l := g; l < g+shape.Way; l++ {
				if l != i && math.Abs(workload.EvalComposite(shape.Sign, dist[i]-dist[l])) < 0.5 {
					decided = false
				}
			}
		}
		if !decided {
			continue
		}
		checked++
		winner := -1
		for i := g; i < g+shape.Way; i++ {
			wins := true
			for l := g; l < g+shape.Way; l++ {
				if l != i && cmp(i, l) > 0 {
					wins = false
				}
			}
			if wins {
				if winner >= 0 {
					t.Fatalf("group %d: two winners %d and %d", g/shape.Way, winner, i)
				}
				winner = i
			}
		}
		if winner != want {
			t.Fatalf("group %d: encrypted minimum %d, plaintext %d", g/shape.Way, winner, want)
		}
	}
	// The clear-cut groups depend only on the (fixed) data: 62 of 256.
	if checked < 50 {
		t.Fatalf("only %d of %d groups clear-cut", checked, groups)
	}
	t.Logf("%d comparisons, max error vs plaintext composite %.2e; %d clear-cut, all correct; %d/%d groups' minima checked",
		(shape.Way-1)*lay.E, maxErr, clear, checked, groups)
}

// Every VQ variant at paper scale: 10K entries, one bootstrapping per
// round, the k−1 comparisons of a round packed in ⌈(k−1)/4⌉ ciphertexts;
// compiles at every optimisation level.
func TestVecSearchFullShapes(t *testing.T) {
	for _, c := range []struct {
		name            string
		way, dim        int
		rounds, packed  int
		queryCts, signs int
	}{
		{"vecsearch-vq1-s", 4, 128, 6, 1, 32, 6 * 1},
		{"vecsearch-vq1-l", 4, 1024, 6, 1, 256, 6 * 1},
		{"vecsearch-vq2-s", 16, 128, 3, 4, 32, 3 * 4},
		{"vecsearch-vq2-l", 16, 1024, 3, 4, 256, 3 * 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := workload.VecSearchFull(c.name, c.way, c.dim)
			lay, err := s.Layout()
			if err != nil {
				t.Fatal(err)
			}
			if lay.E != 16384 || lay.Blocks != 4 || lay.Rounds != c.rounds || lay.Packed != c.packed || lay.Cts != c.queryCts {
				t.Fatalf("layout %+v", lay)
			}
			p, err := workload.Program(c.name)
			if err != nil {
				t.Fatal(err)
			}
			boots, rots, pmults, mults := 0, 0, 0, int64(0)
			for _, n := range p.Nodes {
				switch n.Op {
				case ir.OpBoot:
					boots++
					if n.Level != 28 {
						t.Fatalf("boot to level %d", n.Level)
					}
				case ir.OpHRot:
					rots++
				case ir.OpHMult:
					mults += n.Count
				case ir.OpPMult:
					pmults++
				case ir.OpInput:
					if n.Count != int64(c.queryCts) || n.Level != 2 {
						t.Fatalf("query %+v", n)
					}
				}
			}
			// Per round: 2(k−1) group-cyclic comparison rotations, log2(4)
			// block products, log2(k) folds; plus log2(4) synchronisation
			// rotations. Per round 2(k−1) masks and one padding mask.
			lg := func(x int) int { return int(math.Log2(float64(x))) }
			wantRots := 2 + c.rounds*(2*(c.way-1)+2+lg(c.way))
			if pmults != c.rounds*(2*(c.way-1)+1) {
				t.Fatalf("%d plaintext products", pmults)
			}
			// Per sign polynomial 5 products (x², x³, x⁴, x⁵, x⁷); per round the product tree,
			// block products and the selection.
			wantMults := int64(c.queryCts) + int64(c.rounds)*int64(c.packed*4*5+(c.packed-1)+2+1)
			if boots != c.rounds || rots != wantRots || mults != wantMults {
				t.Fatalf("%d boots, %d rotations, %d products; want %d, %d, %d", boots, rots, mults, c.rounds, wantRots, wantMults)
			}
			compileAll(t, p)
		})
	}
}

func TestVecSearchRejectsBadShapes(t *testing.T) {
	ok := workload.VecSearchSmall("x", 4)
	if _, err := ok.Program(); err != nil {
		t.Fatal(err)
	}
	bad := []func(s *workload.VecSearchShape){
		func(s *workload.VecSearchShape) { s.Way = 3 },
		func(s *workload.VecSearchShape) { s.Entries = 1 << 20 },
		func(s *workload.VecSearchShape) { s.Dim = 0 },
		func(s *workload.VecSearchShape) { s.Sign = nil },
		func(s *workload.VecSearchShape) { s.DBLevel = 9 },
		func(s *workload.VecSearchShape) { s.Params = "bgv-14" },
		func(s *workload.VecSearchShape) { s.Sign = append(s.Sign, workload.SignF3) }, // out of levels
		func(s *workload.VecSearchShape) { s.Rounds = 2 },                             // two rounds without selection
		func(s *workload.VecSearchShape) { s.Masks = true; s.Entries = 8192 },         // one block
	}
	for i, f := range bad {
		s := ok
		s.Sign = append([]workload.SignPoly(nil), ok.Sign...)
		f(&s)
		if _, err := s.Program(); err == nil {
			t.Errorf("case %d accepted %+v", i, s)
		}
	}
	full := workload.VecSearchFull("x", 16, 128)
	boot := *full.Boot
	boot.OutputLevel = 3
	full.Boot = &boot
	if _, err := full.Program(); err == nil {
		t.Error("accepted a bootstrapping that leaves too few levels for a sign polynomial")
	}
	// With 10 levels a round no longer fits: values are bootstrapped step
	// by step, more often than once per round.
	boot.OutputLevel = 10
	p, err := full.Program()
	if err != nil {
		t.Fatal(err)
	}
	boots := 0
	for _, n := range p.Nodes {
		if n.Op == ir.OpBoot {
			boots++
		}
	}
	if boots <= 3 {
		t.Fatalf("%d boots for 3 rounds with 10 levels each", boots)
	}
}
