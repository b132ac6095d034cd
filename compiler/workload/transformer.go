package workload

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// TransformerShape is an encrypted transformer encoder/decoder stack in the
// style of NEXUS (Zhang et al., "Secure Transformer Inference Made
// Non-Interactive", NDSS 2025; code github.com/zju-abclab/NEXUS).
//
// Packing (NEXUS's ciphertext–plaintext matrix multiplication, which packs
// one column of a batch of inputs per ciphertext): the Seq × DModel
// activation is DModel ciphertexts, column j holding X[·, j] of Batch =
// Slots/(2·Seq) sequences, each in a block of 2·Seq slots holding its Seq
// values twice (NEXUS's softmax duplicates the same way, rotate by −len and
// add), so that rotations by up to Seq are cyclic over a sequence's tokens.
// A projection X·W is one PMult per weight (each weight a constant
// plaintext), a Sum over the input columns and a Rescale: no rotations. The
// programs therefore run a batch of Batch sequences (128 at N=2^16 and 128
// tokens); per-sequence figures divide by Batch.
//
// Attention scores (ciphertext–ciphertext, our choice of algorithm where
// the paper leaves it open): the diagonal method on the column packing.
// Diagonal r of Q·Kᵀ is Σ_j q_j ⊙ rot(k_j, r); rot(k_j, r) is computed
// incrementally, rotating by 1 Seq times (one Galois key; r = Seq ≡ 0), so
// per head Seq·dh rotations, HMults and the sums over j. A row's softmax
// denominator is then the sum of the Seq diagonals (no rotation), and
// attention·V is Σ_r p_r ⊙ rot(v_j, r), the same shape again.
//
// The attention output is re-duplicated per block (a mask on the first
// Seq slots, a rotation by −Seq, an add): its second halves read across
// block boundaries.
//
// Nonlinear functions follow NEXUS's src/: softmax as softmax2 does, exp(x)
// ≈ (1 + x/2^k)^(2^k) with k = 6 (the 1/2^k and 1/√dh folded into W_Q),
// the denominator inverted as 1/√(s²) by invert_sqrt (initGuess line, 15
// Newton iterations, 5 Goldschmidt iterations); LayerNorm (layer_norm.cpp)
// as mean, variance and invert_sqrt; GELU (gelu.cpp) as two sign
// comparisons (sgn_eval2 with 3 + 3 odd degree-9 polynomials, depth 4 each)
// selecting a degree-12 polynomial piece and the identity. Bootstrapping is
// placed as NEXUS re-encrypts: when the next step needs more levels than a
// value has left, before each invert_sqrt (its input is read by every
// iteration) and ahead of its Goldschmidt iterations, and on LayerNorm's
// centred values and inverse deviations (our placement, chosen to bootstrap
// the smaller tensors). Constants are added through an encrypted all-ones
// ciphertext (the IR has no plaintext addition). Products are relinearized
// before they are summed (ir.Sum folds degree-1 values only), where NEXUS
// sums first: the programs count one Relinearize per HMult.
type TransformerShape struct {
	Name    string
	Params  string
	Layers  int
	Seq     int
	DModel  int
	Heads   int
	KVHeads int // grouped-query attention: heads share KVHeads key/value heads
	DFF     int
	// Gated selects a SwiGLU feed-forward block (gate and up projections,
	// SiLU(gate)·up, down projection) instead of GELU between two
	// projections.
	Gated bool
	// RMSNorm skips LayerNorm's mean subtraction.
	RMSNorm bool
	// ExpSquarings is k of exp(x) ≈ (1 + x/2^k)^(2^k).
	ExpSquarings int
	// Newton and Gold are invert_sqrt's iteration counts; InitA and InitB
	// its initial line A·x + B.
	Newton, Gold int
	InitA, InitB float64
	// SignG and SignF are the numbers of g and f polynomials of the sign
	// comparisons in GELU/SiLU (degree 9 each).
	SignG, SignF int
	Boot         *ir.BootSpec
}

// headDim is DModel/Heads.
func (s TransformerShape) headDim() int { return s.DModel / s.Heads }

func (s TransformerShape) check() error {
	switch {
	case s.Layers < 1 || s.Seq < 1 || s.DModel < 1 || s.Heads < 1 || s.KVHeads < 1 || s.DFF < 1:
		return fmt.Errorf("workload: transformer %s has a non-positive dimension", s.Name)
	case s.DModel%s.Heads != 0 || s.Heads%s.KVHeads != 0:
		return fmt.Errorf("workload: transformer %s: %d heads (%d KV) do not divide %d", s.Name, s.Heads, s.KVHeads, s.DModel)
	case s.ExpSquarings < 0 || s.Newton < 0 || s.Gold < 0 || s.SignG < 0 || s.SignF < 0:
		return fmt.Errorf("workload: transformer %s: negative iteration count", s.Name)
	}
	return nil
}

// nexusInit is NEXUS's initGuess line for 1/√x on [1e-4, 1000].
const nexusInitA, nexusInitB = -1.29054537e-04, 1.29054537e-01

// geluPoly is NEXUS's GELU middle piece: coefficients of x, x², x⁴, x⁶,
// x⁸, x¹⁰, x¹² after the constant (gelu.cpp, array A).
var geluPoly = []float64{2.25775755e-04, 0.5, 3.96880960e-01, -6.37042698e-02, 8.38841647e-03,
	-7.17830961e-04, 3.49617829e-05, -7.26059653e-07}

// proj is X·W for n layers: a PMult per weight, the Sum over the in
// input columns and one Rescale; x holds in (or n·in) columns.
func (g *gen) proj(x val, in, out int, n int64, name string) val {
	defer g.segment(ir.Linear)()
	cnt := n * int64(out) * int64(in)
	x = g.need(x, 1)
	w := g.stored(name, x.level, cnt, true)
	p := val{g.node(ir.OpPMult, cnt, x.level, 1, x.id, w.id), x.level, cnt}
	return g.rescale(g.sum(p, n*int64(out)))
}

// mulSum multiplies x and y into count instances, relinearizes, folds
// them into sum results and rescales once.
func (g *gen) mulSum(x, y val, count, sum int64) val {
	defer g.segment(ir.Linear)()
	x, y = g.need(x, 1), g.need(y, 1)
	x, y = g.align(x, y)
	m := g.node(ir.OpHMult, count, x.level, 2, x.id, y.id)
	r := val{g.node(ir.OpRelinearize, count, x.level, 1, m), x.level, count}
	return g.rescale(g.sum(r, sum))
}

// constMinus returns c − x through the all-ones ciphertext.
func (g *gen) constMinus(c float64, x val) val {
	if g.ones == nil {
		o := g.input("ones", 1)
		g.ones = &o
	}
	k := g.cmul(*g.ones, c)
	return g.sub(k, x)
}

// expApprox is (1 + x)^(2^k) (x already divided by 2^k).
func (g *gen) expApprox(x val, k int) val {
	defer g.segment(ir.NonLinear)()
	e := g.addConst(x, 1)
	for i := 0; i < k; i++ {
		e = g.need(e, 1)
		e = g.mul(e, e)
	}
	return e
}

// invSqrt is NEXUS's invert_sqrt: the line A·v + B, Newton iterations
// y ← 1.5·y − 0.5·v·y³ and Goldschmidt iterations (x = v·y, h = y/2;
// r = 0.5 − x·h, x += x·r, h += h·r; result 2h). v is bootstrapped first
// unless it already sits at the bootstrapping level (it is read by every
// iteration), iterates are bootstrapped when they run low.
func (g *gen) invSqrt(v val, s TransformerShape) val {
	defer g.segment(ir.NonLinear)()
	if g.boot != nil {
		v = g.need(v, g.boot.OutputLevel-4)
	}
	y := g.addConst(g.cmul(v, s.InitA), s.InitB)
	half := g.cmul(v, -0.5)
	for i := 0; i < s.Newton; i++ {
		y = g.need(y, 3)
		ysq := g.mul(y, y)
		t := g.mul(g.mul(half, y), ysq)
		y = g.add(g.cmul(y, 1.5), t)
	}
	if s.Gold == 0 {
		return y
	}
	// One bootstrapping of y ahead of Goldschmidt's 2·Gold + 2 levels
	// (when the chain allows) instead of one of x and one of h inside.
	if g.boot != nil {
		y = g.need(y, min(2*s.Gold+3, g.boot.OutputLevel))
	}
	x := g.mul(v, y)
	h := g.cmul(y, 0.5)
	for i := 0; i < s.Gold; i++ {
		x, h = g.need(x, 3), g.need(h, 3)
		r := g.constMinus(0.5, g.mul(x, h))
		if i < s.Gold-1 { // the last x is never read
			x = g.add(x, g.mul(x, r))
		}
		h = g.add(h, g.mul(h, r))
	}
	h = g.need(h, 1)
	return g.cmul(h, 2)
}

// attention emits the attention of n grouped layers on x (count DModel)
// and returns the per-head outputs (count n·DModel). explicit (n = 1, one
// head) emits one node per diagonal, the executable form; otherwise each
// step over the Seq diagonals is one counted node (the same operations;
// the chaining of the incremental rotations is not represented).
func (s TransformerShape) attention(g *gen, x val, n int64, explicit bool) val {
	dh, seq := s.headDim(), int64(s.Seq)
	d, kv := s.DModel, s.KVHeads*s.headDim()
	q := g.proj(x, d, d, n, "wq")
	k := g.proj(x, d, kv, n, "wk")
	v := g.proj(x, d, kv, n, "wv")
	heads := n * int64(s.Heads)
	if explicit {
		if n != 1 || s.Heads != 1 || s.KVHeads != 1 {
			g.fail("explicit attention is one head of one layer")
			return x
		}
		diags := make([]val, s.Seq)
		kr := k
		for r := range diags {
			kr = g.rot(kr, 1)
			diags[r] = g.mulSum(q, kr, int64(dh), 1)
		}
		var sum val
		for r := range diags {
			diags[r] = g.expApprox(diags[r], s.ExpSquarings)
			if r == 0 {
				sum = diags[r]
			} else {
				sum = g.add(sum, diags[r])
			}
		}
		inv := g.invSqrt(g.mul(sum, sum), s)
		var o val
		vr := v
		for r := range diags {
			p := g.mul(diags[r], inv)
			vr = g.rot(vr, 1)
			vr, p = g.align(vr, p)
			m := g.node(ir.OpHMult, int64(dh), p.level, 2, p.id, vr.id)
			t := val{g.node(ir.OpRelinearize, int64(dh), p.level, 1, m), p.level, int64(dh)}
			if r == 0 {
				o = t
			} else {
				o = g.add(o, t)
			}
		}
		return s.redup(g, g.rescale(o))
	}
	kr := g.rotCount(k, 1, seq*k.count)
	scores := g.mulSum(q, kr, seq*heads*int64(dh), seq*heads)
	e := g.expApprox(scores, s.ExpSquarings)
	restore := g.segment(ir.NonLinear) // softmax: e / sqrt(sum^2)
	sum := g.sum(e, heads)
	inv := g.invSqrt(g.mul(sum, sum), s)
	p := g.mul(e, inv)
	restore()
	vr := g.rotCount(v, 1, seq*v.count)
	return s.redup(g, g.mulSum(p, vr, seq*heads*int64(dh), heads*int64(dh)))
}

// redup keeps the first Seq slots of each 2·Seq block and copies them into
// the second half.
func (s TransformerShape) redup(g *gen, o val) val {
	defer g.segment(ir.Linear)()
	m := g.stored("dup-mask", max(o.level, 1), 1, true)
	y := g.pmulN(o, m, o.count)
	return g.add(y, g.rot(y, -s.Seq))
}

// Batch is the number of sequences a program processes at once: the
// slots over blocks of 2·Seq.
func (s TransformerShape) Batch() (int, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return 0, err
	}
	return (1 << (p.LogN - 1)) / (2 * s.Seq), nil
}

// norm is LayerNorm (or RMSNorm) over the DModel columns of n layers
// (count n·DModel); the affine γ, β fold into the next weights.
func (s TransformerShape) norm(g *gen, x val, n int64) val {
	defer g.segment(ir.NonLinear)()
	d := float64(s.DModel)
	xc := x
	if !s.RMSNorm {
		mu := g.cmul(g.sum(x, n), 1/d)
		xc = g.sub(x, mu)
	}
	// One bootstrapping of the centred values leaves the variance enough
	// levels for invert_sqrt (instead of one of xc and one of the variance).
	if g.boot != nil {
		xc = g.need(xc, g.boot.OutputLevel-2)
	}
	variance := g.cmul(g.sum(g.mul(xc, xc), n), 1/d)
	inv := g.invSqrt(variance, s)
	if g.boot != nil {
		// Bootstrapping the n inverse deviations (not the n·DModel
		// outputs) hands the next layer fresh levels.
		inv = g.need(inv, g.boot.OutputLevel-6)
	}
	return g.mul(g.need(xc, 1), inv)
}

// gelu is NEXUS's GELU (gelu.cpp): b0 = sgn((x + 3.5)/8.5), b1 =
// sgn((x − 3.5)/8.5) by sgn_eval2 (SignG g- and SignF f-polynomials of
// degree 9, bootstrapped when below 4 levels), then A(x)·(b0 − b1) +
// x·(b1 + 0.5) with A the degree-12 piece. The two comparisons run as one
// node of twice the instances (the same operations; their different
// thresholds are one placeholder constant), as do b0 − b1 and b1 + 0.5's
// operands (one Sum over the pair). SiLU (Llama's SwiGLU) takes the same
// piecewise structure.
func (s TransformerShape) gelu(g *gen, x val) val {
	defer g.segment(ir.NonLinear)()
	x = g.need(x, 6)
	t := g.addConst(x, 3.5)
	two := val{g.node(ir.OpCMult, 2*t.count, t.level, 1, t.id), t.level, 2 * t.count}
	b := g.rescale(two)
	for i := 0; i < s.SignG+s.SignF; i++ {
		b = g.need(b, 4)
		b = g.oddPoly(b, placeholderOdd(9))
	}
	diff := g.sum(b, x.count)
	a2 := g.addConst(diff, 0.5)
	x2 := g.mul(x, x)
	x4 := g.mul(x2, x2)
	x6 := g.mul(x2, x4)
	x8 := g.mul(x4, x4)
	x10 := g.mul(x2, x8)
	x12 := g.mul(x6, x6)
	a := g.cmul(x, geluPoly[1])
	for i, p := range []val{x2, x4, x6, x8, x10, x12} {
		a = g.add(a, g.cmul(p, geluPoly[i+2]))
	}
	a = g.addConst(a, geluPoly[0])
	return g.add(g.mul(a, diff), g.mul(x, a2))
}

// layer emits n grouped transformer layers on x (count DModel): attention
// with its output projection and residual, norm, feed-forward block with
// residual, norm. The result has count n·DModel.
func (s TransformerShape) layer(g *gen, x val, n int64) val {
	d := s.DModel
	att := s.attention(g, x, n, false)
	att = g.proj(att, d, d, n, "wo")
	h := s.norm(g, g.add(att, x), n)
	var f val
	if s.Gated {
		gate := g.proj(h, d, s.DFF, n, "w-gate")
		up := g.proj(h, d, s.DFF, n, "w-up")
		f = g.mul(s.gelu(g, gate), up)
	} else {
		f = s.gelu(g, g.proj(h, d, s.DFF, n, "w1"))
	}
	f = g.proj(f, s.DFF, d, n, "w2")
	return s.norm(g, g.add(f, h), n)
}

// entryLevel is the steady-state level of a layer's input: the level a
// layer's output leaves when its input has that level (found by iterating
// a layer from the top of the chain; bootstrapping makes it converge).
func (s TransformerShape) entryLevel() (int, error) {
	level := -1
	for it := 0; it < 8; it++ {
		g, err := newGen(s.Name, s.Params, s.Boot)
		if err != nil {
			return 0, err
		}
		x := g.input("x", int64(s.DModel))
		if level >= 0 {
			x = g.down(x, level)
		}
		out := s.layer(g, x, 1)
		if g.err != nil {
			return 0, g.err
		}
		if out.level == level {
			return level, nil
		}
		level = out.level
	}
	return level, nil
}

// Program builds the stack with its Layers grouped by counts: one set of
// nodes counts the layers, fed the input levelled down to the steady-state
// entry level and folded back to DModel columns at the end (a Sum: the
// modelling cost of grouping, (Layers − 1)·DModel HAdds). Heads and the
// Seq diagonals of the score and attention·V products are counts too.
// Operation counts per layer are exact; the chaining between layers is
// not represented.
func (s TransformerShape) Program() (*ir.Program, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	entry, err := s.entryLevel()
	if err != nil {
		return nil, err
	}
	g, err := newGen(s.Name, s.Params, s.Boot)
	if err != nil {
		return nil, err
	}
	x := g.down(g.input("x", int64(s.DModel)), entry)
	y := s.layer(g, x, int64(s.Layers))
	g.output("y", g.sum(y, int64(s.DModel)))
	return g.build()
}

// AttentionHead builds one attention head of one layer in its explicit,
// executable form (no bootstrapping: params must have the levels): input
// "x" (DModel column ciphertexts) and "ones", stored plaintext weights
// "wq", "wk", "wv" (dh·DModel each, output-column major) and "dup-mask",
// output "attn" (dh columns). s.Heads and s.KVHeads must be 1, s.DModel is the model
// width and the head width.
func AttentionHead(name, params string, s TransformerShape) (*ir.Program, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	g, err := newGen(name, params, nil)
	if err != nil {
		return nil, err
	}
	x := g.input("x", int64(s.DModel))
	g.output("attn", s.attention(g, x, 1, true))
	return g.build()
}

// nexusBoot is NEXUS's bootstrapping on its parameters: full 2^15 slots,
// CoeffsToSlots and SlotsToCoeffs in 2 levels each, cosine of degree 59
// with 2 double angles (boundary K = 25), no arcsine, leaving 20 levels
// (remaining_level = 20 in NEXUS's tests).
var nexusBoot = ir.BootSpec{OutputLevel: 20, CtSLevels: 2, StCLevels: 2, EvalModDegree: 59, DoubleAngle: 2, LogSlots: 15}

// BERTBase is BERT-Base (Devlin et al.: 12 layers, width 768, 12 heads,
// FFN 3072, GELU, LayerNorm) at NEXUS's 128 input tokens.
var BERTBase = TransformerShape{Name: "bert-base", Params: "nexus", Layers: 12, Seq: 128, DModel: 768, Heads: 12, KVHeads: 12,
	DFF: 3072, ExpSquarings: 6, Newton: 15, Gold: 5, InitA: nexusInitA, InitB: nexusInitB, SignG: 3, SignF: 3, Boot: &nexusBoot}

// Llama3_8B is Llama 3 8B (Meta's model card / config.json: 32 layers,
// width 4096, 32 heads with 8 key/value heads, SwiGLU FFN 14336, RMSNorm)
// with NEXUS's kernels at the same 128 tokens (our choice: Rosemary does
// not give the sequence length).
var Llama3_8B = TransformerShape{Name: "llama3-8b", Params: "nexus", Layers: 32, Seq: 128, DModel: 4096, Heads: 32, KVHeads: 8,
	DFF: 14336, Gated: true, RMSNorm: true, ExpSquarings: 6, Newton: 15, Gold: 5, InitA: nexusInitA, InitB: nexusInitB,
	SignG: 3, SignF: 3, Boot: &nexusBoot}

// SmallAttention is the small form's head: 8 tokens, width 4, k = 3, two
// Newton and one Goldschmidt iteration, an initial line for denominators²
// in [20, 180].
var SmallAttention = TransformerShape{Name: "attention-small", Params: "insecure-test-deep", Layers: 1, Seq: 8, DModel: 4,
	Heads: 1, KVHeads: 1, DFF: 4, ExpSquarings: 3, Newton: 2, Gold: 1, InitA: -8.79e-4, InitB: 0.2287}

func init() {
	for _, m := range []struct {
		name, desc, source string
		shape              TransformerShape
	}{
		{"bert", "BERT-Base inference after NEXUS (12 layers × 12 heads, 128 tokens; one program serves a batch of 128 sequences)",
			"Rosemary §Workloads [71]: NEXUS (NDSS'25) kernels and bootstrapping placement; BERT-Base 12/768/12/3072, 128 tokens (NEXUS); N=2^16, logQP=1743",
			BERTBase},
		{"llama", "Llama3-8B inference with NEXUS's kernels (32 layers × 32 heads, GQA 8, 128 tokens; one program serves a batch of 128 sequences)",
			"Rosemary §Workloads [71]: NEXUS kernels on Llama 3 8B (32/4096/32 heads, 8 KV heads, SwiGLU 14336, RMSNorm); 128 tokens (our choice)",
			Llama3_8B},
	} {
		shape := m.shape
		register(Workload{
			Name: m.name, Description: m.desc, Source: m.source,
			Full: func() (*ir.Program, error) { return shape.Program() },
			Small: func() (*ir.Program, error) {
				return AttentionHead(m.name+"-small", SmallAttention.Params, SmallAttention)
			},
		})
	}
}
