package workload

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// oddPolyDepth is the number of levels oddPoly spends on a polynomial of
// degree deg: ⌈log2(deg+1)⌉.
func oddPolyDepth(deg int) int { return bits.Len(uint(deg)) }

// oddPoly evaluates the odd polynomial Σ c[k]·x^k (even entries must be
// zero) in the power basis with depth ⌈log2(deg+1)⌉ and no constant
// additions: the powers x^(2^j) are squared up once, and each monomial is
// built as c_k·x times the powers of the set bits of k − 1 in ascending
// order, so the coefficient costs no extra level (the technique of
// NEXUS's eval_odd_deg9_poly, generalised). Zero coefficients are skipped.
func (g *gen) oddPoly(x val, c []float64) val {
	deg := len(c) - 1
	if deg < 1 || deg%2 == 0 {
		g.fail("odd polynomial of degree %d", deg)
		return x
	}
	for k := 0; k <= deg; k += 2 {
		if c[k] != 0 {
			g.fail("polynomial has an even coefficient at %d", k)
			return x
		}
	}
	jmax := bits.Len(uint(deg)) - 1
	pow := []val{x}
	for j := 1; j <= jmax; j++ {
		pow = append(pow, g.mul(pow[j-1], pow[j-1]))
	}
	var acc *val
	for k := 1; k <= deg; k += 2 {
		if c[k] == 0 {
			continue
		}
		t := g.cmul(x, c[k])
		for j := 1; j <= jmax; j++ {
			if k>>j&1 == 1 {
				t = g.mul(t, pow[j])
			}
		}
		if acc == nil {
			acc = &t
		} else {
			s := g.add(*acc, t)
			acc = &s
		}
	}
	if acc == nil {
		g.fail("zero polynomial")
		return x
	}
	return *acc
}

// evalOddPoly is oddPoly on plain values (the reference for tests).
func evalOddPoly(x float64, c []float64) float64 {
	var s, p float64 = 0, 1
	for k := range c {
		s += c[k] * p
		p *= x
	}
	return s
}

// ConvShape is one multiplexed parallel convolution (MULTPARCONV, Lee et
// al., "Low-Complexity Deep Convolutional Neural Networks on Fully
// Homomorphic Encryption Using Multiplexed Parallel Convolutions", ICML
// 2022) with a 3×3 kernel, batch normalisation folded into the weights.
// The input tensor H×W×Ci is packed with gap K (K² channels interleaved per
// pixel block, Ci/K² such slices) into Slots slots and replicated P times;
// P output channels are computed at once, so the convolution runs Q =
// ⌈Co/P⌉ groups.
type ConvShape struct {
	H, W   int // input height and width
	Ci, Co int // input and output channels
	K      int // input gap (multiplexing factor k_i)
	Stride int // 1, or 2 for the downsampling layers (output gap 2K)
	Slots  int // slots the packing uses (n)
}

func pow2Floor(x int) int {
	if x < 1 {
		return 1
	}
	return 1 << (bits.Len(uint(x)) - 1)
}

func log2Ceil(x int) int {
	if x <= 1 {
		return 0
	}
	return bits.Len(uint(x - 1))
}

// slices is t = ⌈Ci/K²⌉, the channel slices of the input packing.
func (s ConvShape) slices() int { return (s.Ci + s.K*s.K - 1) / (s.K * s.K) }

// out returns the output packing: gap K·Stride, H/Stride × W/Stride.
func (s ConvShape) out() ConvShape {
	return ConvShape{H: s.H / s.Stride, W: s.W / s.Stride, Ci: s.Co, Co: s.Co, K: s.K * s.Stride, Stride: 1, Slots: s.Slots}
}

// copies is P, the power-of-two replication of the packed tensor that fits
// the slots (Lee et al. p_i = 2^⌊log2(n/(k²·h·w·t))⌋).
func (s ConvShape) copies() int {
	return pow2Floor(s.Slots / (s.K * s.K * s.H * s.W * s.slices()))
}

// Groups is Q = ⌈Co/P_out⌉, the output-channel groups.
func (s ConvShape) Groups() int {
	o := s.out()
	return (s.Co + o.copies() - 1) / o.copies()
}

func (s ConvShape) check() error {
	switch {
	case s.H < 1 || s.W < 1 || s.Ci < 1 || s.Co < 1 || s.K < 1 || s.Slots < 1:
		return fmt.Errorf("workload: conv shape %+v has a non-positive dimension", s)
	case s.Stride != 1 && s.Stride != 2:
		return fmt.Errorf("workload: conv stride %d (1 or 2)", s.Stride)
	case s.K&(s.K-1) != 0:
		return fmt.Errorf("workload: conv gap %d is not a power of two", s.K)
	case s.K*s.K*s.H*s.W*s.slices() > s.Slots:
		return fmt.Errorf("workload: conv %dx%dx%d with gap %d does not fit %d slots", s.H, s.W, s.Ci, s.K, s.Slots)
	case s.H%s.Stride != 0 || s.W%s.Stride != 0:
		return fmt.Errorf("workload: conv %dx%d not divisible by stride %d", s.H, s.W, s.Stride)
	}
	return nil
}

// kernelOffsets returns the rotation of each 3×3 kernel tap (dy, dx ∈
// {−1, 0, 1}, row-major): a neighbour dy rows and dx columns away sits
// K²·W·dy + K·dx slots away in the gap-K packing.
func (s ConvShape) kernelOffsets() []int {
	var off []int
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			off = append(off, s.K*s.K*s.W*dy+s.K*dx)
		}
	}
	return off
}

// sumSteps returns the rotations of SumSlots: log2 K along the columns and
// log2 K along the rows of each K×K block (gathering its K² channels), then
// ⌈log2 t⌉ across the channel slices.
func (s ConvShape) sumSteps() []int {
	var st []int
	for j := 1; j < s.K; j <<= 1 {
		st = append(st, j)
	}
	for j := 1; j < s.K; j <<= 1 {
		st = append(st, j*s.K*s.W)
	}
	block := s.K * s.K * s.H * s.W
	for j := 0; j < log2Ceil(s.slices()); j++ {
		st = append(st, block<<j)
	}
	return st
}

// groupShift is the rotation placing output group i (right by i blocks of
// the output packing's channel slices).
func (s ConvShape) groupShift(i int) int {
	o := s.out()
	return -i * o.K * o.K * o.H * o.W
}

// convOpts selects the weight kind and the IR form of a convolution.
type convOpts struct {
	encrypted bool // EW: weights are ciphertexts (HMult) instead of plaintexts (PMult)
	// explicit emits one chain of nodes per output group with its own
	// weights and exact placement rotation (the executable form); otherwise
	// the groups are one counted node each step and the placement rotations
	// one counted HRot with group 1's amount: the same operation counts but
	// one placement rotation more per layer (group 0's, by 0, is skipped in
	// the explicit form) and the rotation-key set reduced to one placement
	// key.
	explicit bool
}

// conv emits n identical MULTPARCONV + BN layers (n > 1 only in the grouped
// form) on x and returns their outputs (count n, two levels down): 8
// kernel rotations; per group 9 weight products (EW: HMult + Relinearize),
// SumSlots, a selection mask (PMult) and a placement
// rotation; the groups added; log2 P_out rotate-and-add steps replicating
// the output for the next layer.
func (g *gen) conv(x val, s ConvShape, n int64, name string, o convOpts) val {
	defer g.segment(ir.Linear)()
	if err := s.check(); err != nil {
		g.fail("%v", err)
		return x
	}
	if o.explicit && n != 1 {
		g.fail("explicit convolution of %d layers", n)
		return x
	}
	offs := s.kernelOffsets()
	taps := make([]val, len(offs))
	for u, k := range offs {
		if k == 0 {
			taps[u] = x
		} else {
			taps[u] = g.rot(x, k)
		}
	}
	q := s.Groups()
	groups := int64(q)
	if o.explicit {
		groups = 1
	}
	var acc *val
	for i := 0; i < q; i++ {
		if !o.explicit && i > 0 {
			break
		}
		cnt := n * groups
		var z val
		for u := range taps {
			wname := fmt.Sprintf("%s/w%d", name, u)
			if o.explicit {
				wname = fmt.Sprintf("%s/g%d/w%d", name, i, u)
			}
			w := g.stored(wname, taps[u].level, cnt, !o.encrypted)
			var p val
			if o.encrypted {
				// Relinearized per product: the device lowering adds
				// degree-1 operands only.
				m := g.node(ir.OpHMult, cnt, taps[u].level, 2, taps[u].id, w.id)
				p = val{g.node(ir.OpRelinearize, cnt, taps[u].level, 1, m), taps[u].level, cnt}
			} else {
				p = val{g.node(ir.OpPMult, cnt, taps[u].level, 1, taps[u].id, w.id), taps[u].level, cnt}
			}
			if u == 0 {
				z = p
			} else {
				z = g.add(z, p)
			}
		}
		z = g.rescale(z)
		for _, k := range s.sumSteps() {
			z = g.add(z, g.rot(z, k))
		}
		mname := name + "/mask"
		if o.explicit {
			mname = fmt.Sprintf("%s/g%d/mask", name, i)
		}
		y := g.pmulN(z, g.stored(mname, z.level, cnt, true), cnt)
		if o.explicit {
			if i > 0 {
				y = g.rot(y, s.groupShift(i))
			}
		} else if q > 1 {
			y = g.rot(y, s.groupShift(1))
			y = g.sum(y, n)
		}
		if acc == nil {
			acc = &y
		} else {
			a := g.add(*acc, y)
			acc = &a
		}
	}
	out := *acc
	ob := s.out()
	stride := ob.K * ob.K * ob.H * ob.W * ob.slices()
	for c := 1; c < ob.copies(); c <<= 1 {
		out = g.add(out, g.rot(out, -c*stride))
	}
	return out
}

// ReLUApprox is an approximate ReLU, x·(1 + sgn(x))/2, with sgn the
// composition of odd polynomials (applied first to last).
type ReLUApprox struct {
	Polys [][]float64
}

// Depth is the levels the approximation spends: the polynomials' depths,
// plus one for the product x·sgn(x) (the ½ rides on x).
func (r ReLUApprox) Depth() int {
	d := 1
	for _, p := range r.Polys {
		d += oddPolyDepth(len(p) - 1)
	}
	return d
}

// Eval is the plaintext reference.
func (r ReLUApprox) Eval(x float64) float64 {
	s := x
	for _, p := range r.Polys {
		s = evalOddPoly(s, p)
	}
	return 0.5*x + 0.5*x*s
}

// relu emits the approximation on x.
func (g *gen) relu(x val, r ReLUApprox) val {
	defer g.segment(ir.NonLinear)()
	s := x
	for _, p := range r.Polys {
		s = g.oddPoly(s, p)
	}
	h := g.cmul(x, 0.5)
	return g.add(h, g.mul(h, s))
}

// placeholderOdd is an odd polynomial of the given degree whose (nonzero,
// non-integer) coefficients only give it its shape: full-scale programs are
// never executed, and the compiler sees only the operations (as
// compiler.ExpandBoot's constants).
func placeholderOdd(deg int) []float64 {
	c := make([]float64, deg+1)
	for k := 1; k <= deg; k += 2 {
		c[k] = 0.5 / float64(k)
	}
	return c
}

// leeReLU is Lee et al.'s AppReLU for ResNet-110: the composite minimax
// sign approximation with precision α = 13, polynomial degrees (15, 15, 27)
// (ICML'22 §Experiments, after Lee et al., "Minimax approximation of sign
// function by composite polynomial for homomorphic comparison"); depth
// 4 + 4 + 5 + 1 = 14.
var leeReLU = ReLUApprox{Polys: [][]float64{placeholderOdd(15), placeholderOdd(15), placeholderOdd(27)}}

// leeBoot is the bootstrapping of Lee et al.'s ResNet (FHE-MP-CNN): 2^14
// sparse slots (one 32×32×16 CIFAR tensor), CoeffsToSlots and SlotsToCoeffs
// in 2 levels each, a cosine approximation of degree 59 with 2 double-angle
// steps (boundary K = 25), no arcsine (inverse degree 1), leaving 16 levels
// for the network, as their parameters do (16 × 46-bit primes).
var leeBoot = ir.BootSpec{OutputLevel: 16, CtSLevels: 2, StCLevels: 2, EvalModDegree: 59, DoubleAngle: 2, LogSlots: 14}

// ResNetShape is ResNet-(6B+2) for CIFAR-10 (He et al.'s CIFAR ResNets:
// a 3→16 convolution, three stages of B basic blocks with 16, 32 and 64
// channels on 32×32, 16×16 and 8×8 images, average pooling and a 64→10
// fully connected layer) as Lee et al. run it: every convolution is a
// MULTPARCONV with BN folded in, every activation is bootstrapped (with
// their imaginary-removing step: the real part, ct + conj(ct), ½ folded into
// the next constants) and then AppReLU, so one bootstrapping per
// convolution; downsampling shortcuts (option A) are a masked, rotated
// copy of the block input per output group.
type ResNetShape struct {
	Name      string
	Params    string
	Blocks    int // B per stage (18 for ResNet-110)
	Encrypted bool
	ReLU      ReLUApprox
	Boot      ir.BootSpec
	Slots     int
}

// Program builds the network with identical layers grouped by counts: the
// 3×3 convolutions of one shape in a stage (2B, or 2B − 1 after the
// stride-2 one) form one run, a set of nodes counting the layers, fed the
// run's input and folded back to one ciphertext (a Sum: n − 1 HAdds per run
// of n, the modelling cost of grouping). Every layer of a run adds the
// shortcut, where the network adds it after every second convolution: B
// (or B − 1) HAdds too many per stage, 52 for ResNet-110. All other
// operation counts per layer are exact; the chaining between the grouped
// layers is not represented. Five bootstrapping sites remain (the two
// stride-2 convolutions and the three runs; conv1's activation runs on the
// fresh ciphertext's levels), which keeps the expanded program and its
// compilation small.
func (s ResNetShape) Program() (*ir.Program, error) {
	if s.Blocks < 2 {
		return nil, fmt.Errorf("workload: resnet needs at least 2 blocks per stage")
	}
	boot := s.Boot
	g, err := newGen(s.Name, s.Params, &boot)
	if err != nil {
		return nil, err
	}
	o := convOpts{encrypted: s.Encrypted}
	layer := func(x val, c ConvShape, n int64, name string, shortcut *val) val {
		// x is one ciphertext; the n grouped layers' instances all read it.
		y := g.conv(x, c, n, name, o)
		if shortcut != nil {
			y = g.add(y, *shortcut)
		}
		// AppReLU and the next convolution (two levels) on one bootstrapping.
		defer g.segment(ir.NonLinear)()
		b := g.need(y, s.ReLU.Depth()+2)
		if b.id != y.id {
			b = g.add(b, g.conj(b)) // imaginary removal after bootstrapping
		}
		y = b
		y = g.relu(y, s.ReLU)
		return g.sum(y, 1)
	}
	img := g.input("image", 1)
	c1 := ConvShape{H: 32, W: 32, Ci: 3, Co: 16, K: 1, Stride: 1, Slots: s.Slots}
	x := layer(img, c1, 1, "conv1", nil)
	n := int64(s.Blocks)
	type stage struct {
		c    ConvShape
		down *ConvShape
	}
	st1 := ConvShape{H: 32, W: 32, Ci: 16, Co: 16, K: 1, Stride: 1, Slots: s.Slots}
	d2 := ConvShape{H: 32, W: 32, Ci: 16, Co: 32, K: 1, Stride: 2, Slots: s.Slots}
	st2 := d2.out()
	d3 := ConvShape{H: 16, W: 16, Ci: 32, Co: 64, K: 2, Stride: 2, Slots: s.Slots}
	st3 := d3.out()
	for si, sg := range []stage{{st1, nil}, {st2, &d2}, {st3, &d3}} {
		convs := 2 * n
		shortcut := x
		if sg.down != nil {
			// The first block downsamples: a stride-2 convolution, and a
			// shortcut that subsamples and zero-pads the block input.
			shortcut = g.shortcut(x, *sg.down)
			x = layer(x, *sg.down, 1, fmt.Sprintf("s%d/down", si+1), nil)
			convs--
		}
		x = layer(x, sg.c, convs, fmt.Sprintf("s%d", si+1), &shortcut)
	}
	x = g.poolFC(x, st3)
	g.output("logits", x)
	return g.build()
}

// shortcut is the option-A downsampling shortcut of a stride-2 block: per
// output group a selection mask and a placement rotation of the block
// input (our reading of Lee et al.'s multiplexed downsampling), summed.
func (g *gen) shortcut(x val, s ConvShape) val {
	defer g.segment(ir.Linear)()
	q := int64(s.Groups())
	m := g.stored(fmt.Sprintf("shortcut-%dx%d/mask", s.H, s.Ci), x.level, q, true)
	y := g.pmulN(x, m, q)
	if q > 1 {
		y = g.rot(y, s.groupShift(1))
	}
	return g.sum(y, 1)
}

// poolFC is global average pooling over the 8×8 gap-4 packing (rotate and
// add over the pixel grid) and the 64→10 fully connected layer (one PMult
// per class, a rotate-and-add over the 64 channel slots, a placement
// rotation per class, summed).
func (g *gen) poolFC(x val, s ConvShape) val {
	defer g.segment(ir.Linear)()
	for j := s.K; j < s.K*s.W; j <<= 1 {
		x = g.add(x, g.rot(x, j))
	}
	for j := s.K * s.K * s.W; j < s.K*s.K*s.W*s.H; j <<= 1 {
		x = g.add(x, g.rot(x, j))
	}
	const classes = 10
	w := g.stored("fc/w", x.level, classes, true)
	y := g.pmulN(x, w, classes)
	for j := 1; j < s.Co; j <<= 1 {
		y = g.add(y, g.rot(y, j))
	}
	y = g.rot(y, -1)
	return g.sum(y, 1)
}

func resnet110(encrypted bool) (*ir.Program, error) {
	name := "resnet110-uw"
	if encrypted {
		name = "resnet110-ew"
	}
	return ResNetShape{Name: name, Params: "resnet-mpcnn", Blocks: 18, Encrypted: encrypted,
		ReLU: leeReLU, Boot: leeBoot, Slots: 1 << 14}.Program()
}

// nexusSign7 are NEXUS's degree-7 sign polynomials (src/ckks_evaluator.cpp,
// sgn_eval: g = dg_coeff, f = df_coeff, Cheon et al.'s composite
// comparison): g sharpens, f flattens; f∘g approximates sgn on [−1, 1].
var (
	signG7 = []float64{0, 4589.0 / 1024, 0, -16577.0 / 1024, 0, 25614.0 / 1024, 0, -12860.0 / 1024}
	signF7 = []float64{0, 35.0 / 16, 0, -35.0 / 16, 0, 21.0 / 16, 0, -5.0 / 16}
)

// SmallReLU is the approximate ReLU of the small forms: sgn ≈ f∘g∘g
// (depth 3 + 3 + 3, plus 1).
var SmallReLU = ReLUApprox{Polys: [][]float64{signG7, signG7, signF7}}

// SmallConvShape is the convolution of the small ResNet form: a 4×4 image,
// 4 → 4 channels, gap 1, one copy (64 slots used), so 4 output groups.
var SmallConvShape = ConvShape{H: 4, W: 4, Ci: 4, Co: 4, K: 1, Stride: 1, Slots: 64}

// ResNetLayer builds one convolution + BN + approximate ReLU layer in its
// explicit, executable form (no bootstrapping: params must have the
// levels): input "image" (the packed tensor), stored weights
// "conv/g<i>/w<u>" (group i, tap u) and masks "conv/g<i>/mask", output
// "out".
func ResNetLayer(name, params string, c ConvShape, r ReLUApprox, encrypted bool) (*ir.Program, error) {
	g, err := newGen(name, params, nil)
	if err != nil {
		return nil, err
	}
	x := g.input("image", 1)
	y := g.conv(x, c, 1, "conv", convOpts{encrypted: encrypted, explicit: true})
	y = g.relu(y, r)
	g.output("out", y)
	return g.build()
}

func init() {
	for _, enc := range []bool{false, true} {
		name, kind := "resnet-uw", "plaintext"
		if enc {
			name, kind = "resnet-ew", "encrypted"
		}
		encrypted := enc
		register(Workload{
			Name:        name,
			Description: fmt.Sprintf("ResNet-110 on CIFAR-10 with %s weights (multiplexed parallel convolutions, AppReLU, bootstrapping per layer)", kind),
			Source: "Rosemary §Workloads [40]: Lee et al. ICML'22 (MULTPARCONV, composite minimax AppReLU α=13 degrees 15/15/27, " +
				"one imaginary-removing bootstrapping before each AppReLU, N=2^16 logQP=1552, 2^14 slots)",
			Full: func() (*ir.Program, error) { return resnet110(encrypted) },
			Small: func() (*ir.Program, error) {
				return ResNetLayer(name+"-small", "insecure-test-deep", SmallConvShape, SmallReLU, encrypted)
			},
		})
	}
}
