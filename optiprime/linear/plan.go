package linear

import (
	"fmt"
	"math"
	"sort"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// Plan is the public layout of one layer under one protocol: both parties
// derive it from the shape, the parameters and the options.
type Plan struct {
	Proto  Protocol
	Shape  ConvShape
	Opt    Options
	Params cheetah.Parameters

	MatVec bool // Cheetah's matrix-vector packing (FC layers under Cheetah)

	// Inner is the stride-1, unpadded convolution the layout works on: a
	// stride-s layer is rewritten as a stride-1 one over the s² polyphase
	// components of the padded input (channel c·s²+a·s+b holds
	// Xpad[y·s+a][x·s+b]) with ⌈K/s⌉² kernels, so no output slot is spent on
	// skipped positions.
	Inner ConvShape

	// Convolution tiling: blocks of Cb channels × Hb × Wb, each giving
	// Sh × Sw stride-1 outputs.
	Cb, Hb, Wb     int
	Sh, Sw         int
	NumCh          int // channel blocks
	TilesH, TilesW int
	LogC           int  // OptiEncode: C = Cb = 2^LogC; 0 for Cheetah
	BSGS           bool // the BSGS schedule is used (OptiEncodeBSGS, where it pays)
	Baby           int  // BSGS baby steps B (divides C)

	// Matrix-vector packing: Nb columns × Mb rows per plaintext.
	Nb, Mb, NumCol, NumRow int

	LogTp  int           // plaintext modulus exponent used: ℓ + LogC
	Noise  cheetah.Bound // worst-case noise of an output before re-randomization
	Flood  cheetah.Bound // ... and after it
	D0, D1 int           // low bits dropped from c0 / c1 of outputs

	Counters Counters // from running the schedule on the counting engine

	gamma uint64 // generator of the order-C Galois subgroup (BSGS)
}

// NewPlan chooses the layout for a layer and computes its counters.
func NewPlan(proto Protocol, params cheetah.Parameters, s ConvShape, opt Options) (*Plan, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	switch proto {
	case OptiEncodeBSGS:
		return newBSGSPlan(params, s, opt)
	case OptiPrime:
		return newCheapestPlan(params, s, opt)
	}
	var best *Plan
	var bestCost float64
	try := func(pl *Plan) {
		if err := pl.finish(); err != nil {
			return
		}
		c := pl.estimate()
		if best == nil || c < bestCost {
			best, bestCost = pl, c
		}
	}
	base := Plan{Proto: proto, Shape: s, Opt: opt, Params: params, Inner: innerShape(s)}
	in := base.Inner
	N := params.N()
	switch {
	case proto == Cheetah && s.isFC():
		for nb := 1; nb <= min(s.Ci, N); nb++ {
			if nb < s.Ci && nb != min(s.Ci, N) && !candidateSize(s.Ci, nb) {
				continue
			}
			pl := base
			pl.MatVec = true
			pl.Nb = nb
			pl.Mb = min(s.Co, N/nb)
			try(&pl)
		}
	default:
		for _, hb := range tileSizes(in.H, in.Kh) {
			for _, wb := range tileSizes(in.W, in.Kw) {
				if hb*wb > N {
					continue
				}
				if proto == Cheetah {
					pl := base
					pl.Cb, pl.Hb, pl.Wb = min(in.Ci, N/(hb*wb)), hb, wb
					try(&pl)
					continue
				}
				for r := 0; (1<<r)*hb*wb <= N && (1<<r) <= N/2; r++ {
					pl := base
					pl.Cb, pl.Hb, pl.Wb, pl.LogC = 1<<r, hb, wb, r
					try(&pl)
				}
			}
		}
	}
	if best == nil {
		// Report why the smallest layout fails.
		pl := base
		if proto == Cheetah && s.isFC() {
			pl.MatVec, pl.Nb, pl.Mb = true, 1, min(s.Co, N)
		} else {
			pl.Hb, pl.Wb, pl.Cb = in.Kh, in.Kw, 1
		}
		if err := pl.finish(); err != nil {
			return nil, fmt.Errorf("linear: %s for %+v with N=%d: %w", proto, s, N, err)
		}
		return nil, fmt.Errorf("linear: %s: no layout for %+v with N=%d", proto, s, N)
	}
	if err := best.count(); err != nil {
		return nil, err
	}
	return best, nil
}

// newBSGSPlan takes OptiEncode's layout (so communication is identical) and
// replaces the merge tree by the BSGS schedule with the fewest
// automorphisms that fits the noise budget; where no split fits or none
// saves automorphisms (small C, or N = 4096 without a special modulus), the
// layer keeps the merge tree.
func newBSGSPlan(params cheetah.Parameters, s ConvShape, opt Options) (*Plan, error) {
	oe, err := NewPlan(OptiEncode, params, s, opt)
	if err != nil {
		return nil, err
	}
	oe.Proto = OptiEncodeBSGS
	if oe.LogC == 0 {
		return oe, nil
	}
	bs := *oe
	bs.BSGS = true
	if err := bs.finish(); err != nil {
		return oe, nil
	}
	if err := bs.count(); err != nil {
		return nil, err
	}
	if bs.Counters.Automorphisms >= oe.Counters.Automorphisms {
		return oe, nil
	}
	return &bs, nil
}

// candidateSize limits the matrix-vector search to block sizes that change
// the number of blocks (the smallest nb for each count).
func candidateSize(n, nb int) bool {
	k := (n + nb - 1) / nb
	return (n+k-1)/k == nb
}

// tileSizes returns, for each possible number of tiles along a dimension of
// padded size n with kernel k, the smallest tile size giving that count.
func tileSizes(n, k int) []int {
	outs := n - k + 1
	var sizes []int
	seen := map[int]bool{}
	for tiles := 1; tiles <= outs; tiles++ {
		sh := (outs + tiles - 1) / tiles
		if seen[sh] {
			continue
		}
		seen[sh] = true
		sizes = append(sizes, sh+k-1)
	}
	return sizes
}

// C is the channel-encoding block (2^LogC).
func (pl *Plan) C() int { return 1 << pl.LogC }

// Tiles is the number of spatial tiles (1 for matrix-vector).
func (pl *Plan) Tiles() int {
	if pl.MatVec {
		return 1
	}
	return pl.TilesH * pl.TilesW
}

// Inputs is the number of input ciphertexts per tile.
func (pl *Plan) Inputs() int {
	if pl.MatVec {
		return pl.NumCol
	}
	return pl.NumCh
}

// Groups is the number of output ciphertexts per tile.
func (pl *Plan) Groups() int {
	switch {
	case pl.MatVec:
		return pl.NumRow
	case pl.Proto == Cheetah:
		return pl.Shape.Co
	}
	return (pl.Shape.Co + pl.C() - 1) / pl.C()
}

// weightBound is the public bound on |centered weight|.
func (pl *Plan) weightBound() float64 { return math.Exp2(float64(pl.Opt.WeightBits - 1)) }

// finish derives the dependent fields and the noise bounds; it fails if the
// parameters cannot hold the layer.
func (pl *Plan) finish() error {
	p := pl.Params
	s := pl.Shape
	N := p.N()
	pl.LogTp = pl.Opt.LogT + pl.LogC
	if pl.LogTp > cheetah.MaxLogT {
		return fmt.Errorf("ℓ+log2 C = %d exceeds %d", pl.LogTp, cheetah.MaxLogT)
	}
	fresh := p.FreshSK()
	bw := pl.weightBound()
	top := p.MaxLevel()
	var noise cheetah.Bound
	switch {
	case pl.MatVec:
		if pl.Nb*pl.Mb > N {
			return fmt.Errorf("matvec block %dx%d exceeds N", pl.Mb, pl.Nb)
		}
		pl.NumCol = (s.Ci + pl.Nb - 1) / pl.Nb
		pl.NumRow = (s.Co + pl.Mb - 1) / pl.Mb
		noise = cheetah.Bound(pl.NumCol) * cheetah.MulPlain(fresh, float64(pl.Nb*pl.Mb)*bw)
	default:
		in := pl.Inner
		if pl.Cb*pl.Hb*pl.Wb > N || pl.Hb < in.Kh || pl.Wb < in.Kw {
			return fmt.Errorf("block %dx%dx%d does not fit N=%d", pl.Cb, pl.Hb, pl.Wb, N)
		}
		pl.Sh, pl.Sw = pl.Hb-in.Kh+1, pl.Wb-in.Kw+1
		pl.TilesH = (s.OutH() + pl.Sh - 1) / pl.Sh
		pl.TilesW = (s.OutW() + pl.Sw - 1) / pl.Sw
		pl.NumCh = (in.Ci + pl.Cb - 1) / pl.Cb
		kernelL1 := float64(pl.Cb*in.Kh*in.Kw) * bw
		prod := cheetah.Bound(pl.NumCh) * cheetah.MulPlain(fresh, kernelL1)
		ks := p.KeySwitch(top)
		switch {
		case pl.Proto == Cheetah:
			noise = prod
		case !pl.BSGS:
			noise = prod
			for j := 0; j < pl.LogC; j++ {
				noise = 4*noise + ks
			}
		default:
			// P = Σ_i X^i σ(K_i): ‖P‖₁ ≤ C·‖K‖₁, and ≤ N·t'/2 anyway.
			C := pl.C()
			pl.gamma = subgroupGenerator(N, C)
			pL1 := math.Min(float64(C)*kernelL1, float64(N)*math.Exp2(float64(pl.LogTp-1)))
			// Baby steps put key-switching noise under the plaintext
			// products; if the fewest-automorphism split does not fit the
			// noise budget, fall back to fewer baby steps.
			var err error
			for _, b := range babyOrder(C, pl.NumCh, pl.Groups()) {
				babyNoise := fresh
				if b > 1 {
					babyNoise += ks
				}
				inner := cheetah.Bound(pl.NumCh*b) * cheetah.MulPlain(babyNoise, pL1)
				giant := inner
				if C/b > 1 {
					giant += ks
				}
				pl.Baby = b
				if err = pl.fit(cheetah.Bound(C/b) * giant); err == nil {
					return nil
				}
			}
			return err
		}
	}
	return pl.fit(noise)
}

// fit sets the noise bounds and dropped bits for an output noise bound, or
// fails if it cannot be flooded and decrypted.
func (pl *Plan) fit(noise cheetah.Bound) error {
	p := pl.Params
	top := p.MaxLevel()
	pl.Noise = noise + 1 // + rounding of the mask encoding
	post, _, err := p.RerandomizedBound(pl.Noise, top, pl.LogTp, pl.Opt.Lambda)
	if err != nil {
		return err
	}
	pl.Flood = post
	pl.D0, pl.D1, err = p.DropBits(post, top, pl.LogTp)
	return err
}

// estimate is the search objective: bytes both ways (estimated from the
// number of ciphertexts; the reported counters come from count), with
// ciphertext operations as a small tie-breaker.
func (pl *Plan) estimate() float64 {
	p := pl.Params
	in := float64(pl.Tiles() * pl.Inputs())
	out := float64(pl.Tiles() * pl.Groups())
	keep := 0
	switch {
	case pl.MatVec:
		keep = pl.Mb
	case pl.Proto == Cheetah:
		keep = min(pl.Sh, pl.Shape.OutH()) * min(pl.Sw, pl.Shape.OutW())
	default:
		keep = min(pl.Sh, pl.Shape.OutH()) * min(pl.Sw, pl.Shape.OutW()) * min(pl.C(), pl.Shape.Co)
	}
	bytes := in*float64(p.InputSize()) + out*float64(p.OutputSize(keep, pl.D0, pl.D1))
	ops := float64(pl.Tiles()) * float64(pl.Inputs()) * float64(pl.Shape.Co)
	return bytes + 1e-3*ops
}

// subgroupGenerator returns γ = 5^(N/(2C)) mod 2N, a generator of the
// order-C subgroup {g ≡ 1 mod 2N/C} of (Z/2N)^* (C ≤ N/2).
func subgroupGenerator(N, C int) uint64 {
	m := uint64(2 * N)
	g := uint64(1)
	for i := 0; i < N/(2*C); i++ {
		g = g * 5 % m
	}
	return g
}

// powMod is g^e mod m for the int exponents of the plans.
func powMod(g uint64, e int, m uint64) uint64 { return rns.ModExp(g, uint64(e), m) }

// babyOrder lists the power-of-two baby-step counts B | C by increasing
// automorphisms per tile, inputs·(B-1) + groups·(C/B-1) (ties: fewer baby
// steps, which adds less noise).
func babyOrder(C, inputs, groups int) []int {
	var bs []int
	for b := 1; b <= C; b *= 2 {
		bs = append(bs, b)
	}
	cost := func(b int) int { return inputs*(b-1) + groups*(C/b-1) }
	sort.SliceStable(bs, func(i, j int) bool { return cost(bs[i]) < cost(bs[j]) })
	return bs
}

// GaloisElements lists the Galois keys the client must provide.
func (pl *Plan) GaloisElements() []uint64 {
	N := pl.Params.N()
	var out []uint64
	switch {
	case pl.Proto == Cheetah:
	case !pl.BSGS:
		for j := 0; j < pl.LogC; j++ {
			out = append(out, uint64(N>>uint(j)+1))
		}
	default:
		m := uint64(2 * N)
		for v := 1; v < pl.Baby; v++ {
			out = append(out, powMod(pl.gamma, v, m))
		}
		for u := 1; u < pl.C()/pl.Baby; u++ {
			out = append(out, powMod(pl.gamma, u*pl.Baby, m))
		}
	}
	return out
}

// count runs the schedule on the counting engine.
func (pl *Plan) count() error {
	ce := &countEngine{pl: pl}
	if err := pl.schedule(ce); err != nil {
		return err
	}
	pl.Counters = ce.c
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// innerShape rewrites a layer as a stride-1, unpadded convolution over the
// polyphase components of its padded input.
func innerShape(s ConvShape) ConvShape {
	st := s.Stride
	return ConvShape{
		Ci: s.Ci * st * st, H: ceilDiv(s.Hp(), st), W: ceilDiv(s.Wp(), st),
		Co: s.Co, Kh: ceilDiv(s.Kh, st), Kw: ceilDiv(s.Kw, st), Stride: 1, Groups: s.Groups,
	}
}

// Variant names what the layer runs: its protocol, except that a BSGS plan
// that kept OptiEncode's merge tree (no split paid) is "optiencode".
func (pl *Plan) Variant() string {
	if pl.Proto == OptiEncodeBSGS && !pl.BSGS {
		return OptiEncode.String()
	}
	return pl.Proto.String()
}
