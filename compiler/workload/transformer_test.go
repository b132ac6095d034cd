package workload

import (
	"math"
	"sort"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// emulateInvSqrt is invSqrt's arithmetic on plain values.
func emulateInvSqrt(v float64, s TransformerShape) float64 {
	y := s.InitA*v + s.InitB
	for i := 0; i < s.Newton; i++ {
		y = 1.5*y - 0.5*v*y*y*y
	}
	if s.Gold == 0 {
		return y
	}
	x, h := v*y, 0.5*y
	for i := 0; i < s.Gold; i++ {
		r := 0.5 - x*h
		x, h = x+x*r, h+h*r
	}
	return 2 * h
}

// One attention head (projections, diagonal-method scores, softmax with
// NEXUS's exp and invert_sqrt, attention·V) decrypts to the same arithmetic
// on plain values, and is close to exact softmax attention.
func TestAttentionHeadDecrypts(t *testing.T) {
	s := SmallAttention
	seq, d := s.Seq, s.DModel
	pow := math.Pow(2, float64(s.ExpSquarings))
	X := func(tok, j int) float64 { return wave(3, tok*d+j, 0.5) }
	W := map[string]func(j, o int) float64{}
	for i, n := range []string{"wq", "wk", "wv"} {
		seed := 4 + i
		W[n] = func(j, o int) float64 { return wave(seed, j*d+o, 0.35) }
	}
	proj := func(name string, tok, o int) float64 {
		var a float64
		for j := 0; j < d; j++ {
			a += X(tok, j) * W[name](j, o)
		}
		return a
	}
	// Reference: emulation of the encrypted arithmetic, and exact attention.
	emu := make([][]float64, seq)
	exact := make([][]float64, seq)
	for tok := 0; tok < seq; tok++ {
		z := make([]float64, seq) // z[r]: score against token (tok + r) mod seq
		var sum, exactSum float64
		e := make([]float64, seq)
		for r := 0; r < seq; r++ {
			other := (tok + r) % seq
			for j := 0; j < d; j++ {
				z[r] += proj("wq", tok, j) * proj("wk", other, j)
			}
			if math.Abs(z[r]) > 0.6 {
				t.Fatalf("score %v outside the test's range", z[r])
			}
			e[r] = math.Pow(1+z[r]/pow, pow)
			sum += e[r]
			exactSum += math.Exp(z[r])
		}
		if sum*sum < 20 || sum*sum > 180 {
			t.Fatalf("denominator² %v outside the initial line's range", sum*sum)
		}
		inv := emulateInvSqrt(sum*sum, s)
		emu[tok], exact[tok] = make([]float64, d), make([]float64, d)
		for j := 0; j < d; j++ {
			for r := 0; r < seq; r++ {
				vv := proj("wv", (tok+r)%seq, j)
				emu[tok][j] += e[r] * inv * vv
				exact[tok][j] += math.Exp(z[r]) / exactSum * vv
			}
		}
	}
	p, err := AttentionHead("head", s.Params, s)
	if err != nil {
		t.Fatal(err)
	}
	r := newCKKSRun(t, s.Params)
	slots := r.Params.MaxSlots()
	vecs := map[string][][]float64{}
	for j := 0; j < d; j++ {
		col := make([]float64, slots)
		for k := range col {
			col[k] = X(k%seq, j)
		}
		vecs["x"] = append(vecs["x"], col)
	}
	ones := make([]float64, slots)
	for k := range ones {
		ones[k] = 1
	}
	vecs["ones"] = [][]float64{ones}
	mask := make([]float64, slots)
	for k := range mask {
		if k%(2*seq) < seq {
			mask[k] = 1
		}
	}
	vecs["dup-mask"] = [][]float64{mask}
	for _, name := range []string{"wq", "wk", "wv"} {
		for o := 0; o < d; o++ {
			for j := 0; j < d; j++ {
				w := W[name](j, o)
				if name == "wq" {
					w /= pow // 1/2^k folded into W_Q
				}
				c := make([]float64, slots)
				for k := range c {
					c[k] = w
				}
				vecs[name] = append(vecs[name], c)
			}
		}
	}
	out := r.run(t, p, vecs)["attn"]
	if len(out) != d {
		t.Fatalf("%d output columns, want %d", len(out), d)
	}
	worstEmu, worstExact := 0.0, 0.0
	for j := 0; j < d; j++ {
		got := r.Decrypt(t, out[j].Ct)
		for k := 0; k < slots; k++ {
			tok := k % seq
			worstEmu = max(worstEmu, math.Abs(got[k]-emu[tok][j]))
			worstExact = max(worstExact, math.Abs(got[k]-exact[tok][j]))
		}
	}
	if worstEmu > 1e-4 {
		t.Errorf("worst error against the emulated arithmetic %.3g", worstEmu)
	}
	if worstExact > 0.05 {
		t.Errorf("worst error against exact softmax attention %.3g", worstExact)
	}
	t.Logf("%d nodes; worst error vs emulation %.2g, vs exact attention %.2g", len(p.Nodes), worstEmu, worstExact)
}

func TestInvSqrtEmulationConverges(t *testing.T) {
	for _, v := range []float64{25, 64, 100, 170} {
		if got := emulateInvSqrt(v, SmallAttention); math.Abs(got*math.Sqrt(v)-1) > 0.02 {
			t.Errorf("1/√%v ≈ %v", v, got)
		}
	}
	for _, v := range []float64{0.01, 1, 100, 900} {
		if got := emulateInvSqrt(v, BERTBase); math.Abs(got*math.Sqrt(v)-1) > 1e-3 {
			t.Errorf("NEXUS invert_sqrt(%v) ≈ %v", v, got)
		}
	}
}

// BERT-Base and Llama3-8B: exact operation counts of the linear layers and
// the attention rotations, bootstrapping present, compiled at every level.
func TestTransformersCompile(t *testing.T) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name        string
		s           TransformerShape
		pmult, hrot int64
	}{
		// PMults: the projections plus one duplication mask per attention
		// output column; rotations: Seq per key and value column, one per
		// attention output column.
		{"bert", BERTBase, 12 * (4*768*768 + 2*768*3072 + 768), 12 * (2*128*768 + 768)},
		{"llama", Llama3_8B, 32 * (2*4096*4096 + 2*4096*1024 + 3*4096*14336 + 4096), 32 * (2*128*1024 + 4096)},
	} {
		p, err := Program(c.name)
		if err != nil {
			t.Fatal(err)
		}
		n := opCounts(p)
		if n[ir.OpPMult] != c.pmult || n[ir.OpHRot] != c.hrot {
			t.Errorf("%s: %d PMults, %d rotations; want %d, %d", c.name, n[ir.OpPMult], n[ir.OpHRot], c.pmult, c.hrot)
		}
		if n[ir.OpBoot] == 0 {
			t.Errorf("%s: no bootstrapping", c.name)
		}
		if b, err := c.s.Batch(); err != nil || b != 128 {
			t.Errorf("%s: batch %d (%v), want 128", c.name, b, err)
		}
		var lat []float64
		for _, opt := range []compiler.OptLevel{"bare", "tdap", "full"} {
			plan, err := compiler.Compile(p, a, compiler.Options{Opt: compiler.OptLevel(opt)})
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, opt, err)
			}
			lat = append(lat, plan.EstLatency)
		}
		if !sort.IsSorted(sort.Reverse(sort.Float64Slice(lat))) {
			t.Errorf("%s: bare/tdap/full latencies %v not ordered", c.name, lat)
		}
		t.Logf("%s: %d nodes, %d bootstrappings, estimated bare/tdap/full %.4g/%.4g/%.4g s", c.name, len(p.Nodes), n[ir.OpBoot], lat[0], lat[1], lat[2])
	}
}

func TestTransformerShapeChecks(t *testing.T) {
	bad := SmallAttention
	bad.Heads = 3
	if _, err := AttentionHead("x", bad.Params, bad); err == nil {
		t.Fatal("accepted 3 heads over width 4")
	}
	two := SmallAttention
	two.DModel, two.Heads, two.KVHeads = 8, 2, 2
	if _, err := AttentionHead("x", two.Params, two); err == nil {
		t.Fatal("explicit form accepted two heads")
	}
	noBoot := BERTBase
	noBoot.Boot = nil
	if _, err := noBoot.Program(); err == nil {
		t.Fatal("BERT without bootstrapping fit the chain")
	}
}
