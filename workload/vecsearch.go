package workload

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/ir"
)

// SignPoly is an odd polynomial of degree 7 with integer numerators over a
// power-of-two denominator, a component of the composite sign
// approximation of Cheon, Kim, Kim, Lee, Lee, "Efficient Homomorphic
// Comparison Methods with Optimal Complexity" (ASIACRYPT 2020), §3:
// f_3 pushes values towards ±1, g_3 (a minimax-tuned variant) widens the
// region that converges fast. sign(x) ≈ f_3^{df} ∘ g_3^{dg}(x) on [-1, 1].
type SignPoly struct {
	Name  string
	Num   [4]int64 // coefficients of x, x³, x⁵, x⁷
	Denom float64  // common denominator (a power of two)
}

// The two polynomials of Cheon et al. 2020 (n = 3): f_3 = (35x − 35x³ +
// 21x⁵ − 5x⁷)/2^4 and g_3 = (4589x − 16577x³ + 25614x⁵ − 12860x⁷)/2^10.
var (
	SignF3 = SignPoly{Name: "f3", Num: [4]int64{35, -35, 21, -5}, Denom: 16}
	SignG3 = SignPoly{Name: "g3", Num: [4]int64{4589, -16577, 25614, -12860}, Denom: 1024}
)

// Eval evaluates the polynomial in float64 (the plaintext reference).
func (s SignPoly) Eval(x float64) float64 {
	x2 := x * x
	return x * (float64(s.Num[0]) + x2*(float64(s.Num[1])+x2*(float64(s.Num[2])+x2*float64(s.Num[3])))) / s.Denom
}

// EvalComposite applies polys in order (the first is applied first).
func EvalComposite(polys []SignPoly, x float64) float64 {
	for _, p := range polys {
		x = p.Eval(x)
	}
	return x
}

// signDepth is the multiplicative depth of one SignPoly (see signPoly).
const signDepth = 3

// VecSearchShape is an Engorgio-style encrypted vector query (Rosemary
// §Workloads: Engorgio [10] §6.3 / Appendix 9.4, VQ1 and VQ2): homomorphic
// squared-L2 distances between an encrypted query and an encrypted
// database, synchronisation of the partial distances, and a top-k
// selection by k-way comparisons with a composite sign approximation and
// bootstrapping.
//
// Layout (ours, not Engorgio's exact encoding): Entries are padded to
// E = 2^⌈log2 Entries⌉ slots, the N/2 slots hold B = N/(2E) blocks, and the
// Dim dimensions are spread over C = ⌈Dim/B⌉ ciphertexts: ciphertext c,
// block b, slot e holds dimension b·C + c of entry e. The query comes
// replicated the same way (C ciphertexts). Distance: C HSub, C MulRelin, a
// Sum, one Rescale; synchronisation: log2(B) rotate-and-add steps by
// multiples of E, after which every block holds all E distances.
//
// Top-k: Rounds rounds of a k-way tournament (k = Way). In round r the
// entries form groups of k at stride k^r; every slot is compared with the
// k−1 other members of its group (group-cyclic: the partner of position p is
// position (p + j) mod k, a left rotation by j·k^r where p + j < k and a
// right rotation by (k − j)·k^r elsewhere, each masked by a stored mask
// plaintext, MaskValues; cyclic over the E entries thanks to the replicated
// blocks). With block packing (Masks) comparison j goes to block
// (j − 1) mod B, B comparisons per ciphertext, ⌈(k−1)/B⌉ ciphertexts, and
// blocks left over are padded with 1 (above every distance). The
// differences go through the composite sign approximation Sign. Selection:
// the comparison bits 1 − s ∈ {0, 2} (an encrypted all-ones vector, "ones",
// stands in for the constant the IR cannot add) are multiplied over the
// ciphertexts and then over the blocks (rotations by multiples of E), times
// the distances scaled by 2^−(number of bits), and folded with log2(k)
// rotate-and-add steps onto the group's first slot, which then holds the
// group's minimum and moves on to round r + 1. The k-way comparison
// follows the k-sorter of Hong, Kim, Choi, Lee, Cheon, "Efficient Sorting
// of Homomorphic Encrypted Data with k-way Sorting Network" (IEEE TIFS
// 2021), which Rosemary §III cites beside Engorgio; running only the
// selection rounds a top-k query needs (not a full sorting network) is our
// choice. After the last round the output "topk" holds, at the multiples of
// TopSlot, the minima of the E/TopSlot final groups (the client's top-1 is
// the least of them; the k nearest overall are exact only when they fall in
// different groups). Without Select, one round of comparisons is run and
// the signs are returned.
//
// Bootstrapping: when Boot is set, the working distance ciphertext is
// bootstrapped at the start of every round when Boot.OutputLevel covers a
// round (Engorgio bootstraps between comparison stages); with fewer levels
// (small test parameters) values are bootstrapped step by step, before a
// sign polynomial or a product that would run out of levels.
type VecSearchShape struct {
	Name    string
	Params  string
	Entries int64
	Dim     int
	Way     int // k of the k-way comparison
	Rounds  int // tournament rounds (0: until at most Way candidates remain)
	// Sign is the composite sign approximation, applied first to last.
	Sign []SignPoly
	// DBLevel is the level of the stored database and the query.
	DBLevel int
	// Masks packs the k−1 comparisons of a round into blocks (needs B > 1
	// and a level); off, each comparison is its own ciphertext.
	Masks bool
	// Select emits the group-cyclic comparisons and the selection step
	// (the group minimum moves on); off, one round of plain comparisons
	// outputs its signs.
	Select bool
	Boot   *ir.BootSpec
}

// VecSearchLayout is the derived packing of a shape.
type VecSearchLayout struct {
	Slots   int // N/2
	E       int // padded entries
	Blocks  int // B = Slots/E
	Cts     int // C: query and database ciphertexts
	Rounds  int
	Packed  int // comparison ciphertexts per round
	TopSlot int // survivors after the last round sit at multiples of this stride
}

// Layout checks the shape and returns its packing.
func (s VecSearchShape) Layout() (VecSearchLayout, error) {
	p, err := fhe.Lookup(s.Params)
	if err != nil {
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: %w", err)
	}
	if p.Scheme != fhe.CKKS {
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: preset %s is %s, want CKKS", p.Name, p.Scheme)
	}
	slots := 1 << (p.LogN - 1)
	switch {
	case s.Entries < 2 || s.Entries > int64(slots):
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: %d entries outside [2, %d slots]", s.Entries, slots)
	case s.Dim < 1:
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: dimension %d", s.Dim)
	case s.Way < 2 || bits.OnesCount(uint(s.Way)) != 1:
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: way %d must be a power of two ≥ 2", s.Way)
	case len(s.Sign) == 0:
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: no sign polynomial")
	case s.DBLevel < 1 || s.DBLevel > p.Levels():
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: database level %d outside [1, %d]", s.DBLevel, p.Levels())
	case s.Rounds < 0:
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: %d rounds", s.Rounds)
	}
	e := 1 << bits.Len64(uint64(s.Entries-1))
	lay := VecSearchLayout{Slots: slots, E: e, Blocks: slots / e}
	lay.Cts = (s.Dim + lay.Blocks - 1) / lay.Blocks
	lay.Rounds = s.Rounds
	if lay.Rounds == 0 {
		for c := e; c > s.Way; c = (c + s.Way - 1) / s.Way {
			lay.Rounds++
		}
		if lay.Rounds == 0 {
			lay.Rounds = 1
		}
	}
	if !s.Select && lay.Rounds != 1 {
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: without selection only one round is defined (have %d)", lay.Rounds)
	}
	lay.Packed = s.Way - 1
	if s.Masks {
		if lay.Blocks < 2 {
			return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: masks need ≥ 2 blocks (have %d)", lay.Blocks)
		}
		lay.Packed = (s.Way - 2 + lay.Blocks) / lay.Blocks
	}
	lay.TopSlot = 1
	for r := 0; r < lay.Rounds && s.Select; r++ {
		lay.TopSlot *= s.Way
	}
	if s.Select && lay.TopSlot/s.Way*(s.Way-1) >= e {
		return VecSearchLayout{}, fmt.Errorf("workload: vecsearch: %d rounds of %d-way comparisons exceed %d entries", lay.Rounds, s.Way, e)
	}
	return lay, nil
}

// vsBuilder tracks node levels while building.
type vsBuilder struct {
	b     *ir.Builder
	level map[int]int
	boot  *ir.BootSpec
	err   error
}

// ensure bootstraps x when it has fewer than n levels left (and
// bootstrapping is available; otherwise the level check fails later).
func (v *vsBuilder) ensure(x, n int) int {
	if v.level[x] >= n || v.boot == nil {
		return x
	}
	if v.boot.OutputLevel < n {
		v.fail("bootstrapping leaves %d levels, a step needs %d", v.boot.OutputLevel, n)
		return x
	}
	return v.set(v.b.Boot(x, *v.boot), v.boot.OutputLevel)
}

func (v *vsBuilder) set(id, l int) int { v.level[id] = l; return id }

func (v *vsBuilder) fail(format string, a ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("workload: vecsearch: "+format, a...)
	}
}

func (v *vsBuilder) down(x, l int) int {
	switch {
	case v.level[x] == l:
		return x
	case v.level[x] < l:
		v.fail("value at level %d needed at %d", v.level[x], l)
		return x
	}
	return v.set(v.b.LevelDown(x, l), l)
}

func (v *vsBuilder) rescale(x int) int {
	if v.level[x] < 1 {
		v.fail("out of levels")
		return x
	}
	return v.set(v.b.Rescale(x), v.level[x]-1)
}

// mul multiplies two ciphertexts at the lower of their levels and rescales.
func (v *vsBuilder) mul(x, y int) int {
	l := min(v.level[x], v.level[y])
	x, y = v.down(x, l), v.down(y, l)
	return v.rescale(v.set(v.b.MulRelin(x, y), l))
}

func (v *vsBuilder) add(x, y int) int {
	l := min(v.level[x], v.level[y])
	x, y = v.down(x, l), v.down(y, l)
	return v.set(v.b.HAdd(x, y), l)
}

func (v *vsBuilder) sub(x, y int) int {
	l := min(v.level[x], v.level[y])
	x, y = v.down(x, l), v.down(y, l)
	return v.set(v.b.HSub(x, y), l)
}

func (v *vsBuilder) rot(x, k int) int { return v.set(v.b.HRot(x, k), v.level[x]) }

// cmulInt multiplies by an integer constant (no scale change, no level).
func (v *vsBuilder) cmulInt(x int, c int64) int { return v.set(v.b.CMult(x, float64(c)), v.level[x]) }

// cmulFrac multiplies by a non-integer constant and rescales.
func (v *vsBuilder) cmulFrac(x int, c float64) int {
	return v.rescale(v.set(v.b.CMult(x, c), v.level[x]))
}

// signPoly evaluates p on x with depth 3: x² and x/d in parallel, then
// x³/d = (x/d)·x², x⁴ = (x²)², x⁵/d = (x/d)·x⁴, x⁷/d = (x³/d)·x⁴, the
// integer numerators as level-free constant multiplications, three HAdds.
func (v *vsBuilder) signPoly(x int, p SignPoly) int {
	x = v.ensure(x, signDepth)
	x2 := v.mul(x, x)
	xs := v.cmulFrac(x, 1/p.Denom)
	x3 := v.mul(xs, x2)
	x4 := v.mul(x2, x2)
	x5 := v.mul(xs, x4)
	x7 := v.mul(x3, x4)
	acc := v.cmulInt(v.down(xs, v.level[x7]), p.Num[0])
	for i, t := range []int{x3, x5, x7} {
		acc = v.add(acc, v.cmulInt(v.down(t, v.level[x7]), p.Num[i+1]))
	}
	return acc
}

func (v *vsBuilder) sign(x int, polys []SignPoly) int {
	for _, p := range polys {
		x = v.signPoly(x, p)
	}
	return x
}

// RoundLevels is the number of levels one round consumes.
func (s VecSearchShape) RoundLevels(lay VecSearchLayout) int {
	n := signDepth * len(s.Sign)
	if s.Masks || s.Select {
		n++
	}
	if s.Select {
		n += bits.Len(uint(lay.Packed-1)) + bits.Len(uint(lay.Blocks-1)) + 1
	}
	return n
}

// Program builds the query.
func (s VecSearchShape) Program() (*ir.Program, error) {
	lay, err := s.Layout()
	if err != nil {
		return nil, err
	}
	need := s.RoundLevels(lay)
	if s.Boot == nil && s.DBLevel-1 < need*lay.Rounds {
		return nil, fmt.Errorf("workload: vecsearch: %d rounds need %d levels after the distance, have %d (add bootstrapping)", lay.Rounds, need*lay.Rounds, s.DBLevel-1)
	}
	if s.Boot != nil && s.Boot.OutputLevel < signDepth+1 {
		return nil, fmt.Errorf("workload: vecsearch: bootstrapping leaves %d levels, a sign polynomial step needs %d", s.Boot.OutputLevel, signDepth+1)
	}
	v := &vsBuilder{b: ir.NewBuilder(s.Name, s.Params), level: map[int]int{}, boot: s.Boot}
	b := v.b
	c := int64(lay.Cts)
	// Distance and synchronisation are the linear segment, the top-k the
	// non-linear one (ir.Node.Segment: Rosemary's Figure 3 keeps the
	// distance in storage and the sort on the host).
	b.Segment(ir.Linear)
	q := v.set(b.InputN("query", s.DBLevel, c), s.DBLevel)
	db := v.set(b.Stored("database", s.DBLevel, c, false), s.DBLevel)

	// Distance: Σ_c (x_c − q_c)², one Rescale.
	diff := v.sub(db, q)
	sq := v.set(b.MulRelin(diff, diff), s.DBLevel)
	d := v.rescale(v.set(b.Sum(sq, 1), s.DBLevel))
	// Synchronisation: fold the blocks, every block ends with all distances.
	for i := lay.E; i < lay.Slots; i *= 2 {
		d = v.add(d, v.rot(d, i))
	}

	b.Segment(ir.NonLinear)
	// ones is an encrypted all-ones vector stored with the database: the
	// IR has no constant addition, and a comparison bit 1 − s needs one.
	ones := -1
	if s.Select {
		l := s.DBLevel
		if s.Boot != nil {
			l = max(l, s.Boot.OutputLevel)
		}
		ones = v.set(b.Stored("ones", l, 1, false), l)
	}
	mask := func(r, j int, kind string) int {
		return v.set(b.Constant(MaskName(r, j, kind), v.level[d], 1), v.level[d])
	}
	stride := 1
	var signs []int
	for r := 0; r < lay.Rounds; r++ {
		// Bootstrap the working ciphertext once for the whole round when
		// the bootstrapping leaves enough levels; otherwise bootstrap step
		// by step as levels run out.
		if s.Boot != nil && v.level[d] < need {
			d = v.ensure(d, min(need, s.Boot.OutputLevel))
		}
		// The k−1 comparison partners: with selection, group-cyclic
		// (partner of group position p is position (p + j) mod k: a left
		// rotation by j·stride where p + j < k, a right rotation by
		// (k − j)·stride elsewhere, each masked); with block packing,
		// comparison j goes to block (j − 1) mod B of ciphertext
		// ⌊(j − 1)/B⌋.
		var cmp []int
		if s.Masks || s.Select {
			d = v.ensure(d, 1)
			packed := make([]int, lay.Packed)
			for j := 1; j < s.Way; j++ {
				g := j - 1
				if s.Masks {
					g = (j - 1) / lay.Blocks
				}
				var t int
				if s.Select {
					lo := v.set(b.PMult(v.rot(d, j*stride), mask(r, j, "lo")), v.level[d])
					hi := v.set(b.PMult(v.rot(d, lay.Slots-(s.Way-j)*stride), mask(r, j, "hi")), v.level[d])
					t = v.add(lo, hi)
				} else {
					t = v.set(b.PMult(v.rot(d, j*stride), mask(r, j, "block")), v.level[d])
				}
				if s.Masks && (j-1)%lay.Blocks != 0 {
					t = v.add(packed[g], t)
				}
				packed[g] = t
			}
			if s.Select && s.Masks && (s.Way-1)%lay.Blocks != 0 {
				// Blocks without a comparison hold 1 (above every
				// distance), so their comparison bit is 1 too.
				last := lay.Packed - 1
				pad := v.set(b.PMult(v.down(ones, v.level[d]), mask(r, 0, "pad")), v.level[d])
				packed[last] = v.add(packed[last], pad)
			}
			for _, p := range packed {
				cmp = append(cmp, v.sub(d, v.rescale(p)))
			}
		} else {
			for j := 1; j < s.Way; j++ {
				cmp = append(cmp, v.sub(d, v.rot(d, j*stride)))
			}
		}
		signs = signs[:0]
		for _, x := range cmp {
			signs = append(signs, v.sign(x, s.Sign))
		}
		if !s.Select {
			break
		}
		// Selection: bits 1 − s ∈ {0, 2} (2 where the entry is below its
		// partner), multiplied over the ciphertexts and then over the
		// blocks, times the distances scaled by 2^−factors, folded onto
		// the group's first slot: the group minimum.
		factors := len(signs)
		for i, x := range signs {
			signs[i] = v.sub(v.down(ones, v.level[x]), x)
		}
		for len(signs) > 1 {
			var next []int
			for i := 0; i+1 < len(signs); i += 2 {
				next = append(next, v.mul(v.ensure(signs[i], 1), v.ensure(signs[i+1], 1)))
			}
			if len(signs)%2 == 1 {
				next = append(next, signs[len(signs)-1])
			}
			signs = next
		}
		w := signs[0]
		if s.Masks {
			factors *= lay.Blocks
			for i := lay.E; i < lay.Slots; i *= 2 {
				w = v.ensure(w, 1)
				w = v.mul(w, v.rot(w, i))
			}
		}
		scaled := v.cmulFrac(v.ensure(d, 1), math.Ldexp(1, -factors))
		best := v.mul(v.ensure(w, 1), v.ensure(scaled, 1))
		for i := stride; i < stride*s.Way; i *= 2 {
			best = v.add(best, v.rot(best, i))
		}
		d = best
		stride *= s.Way
	}
	if s.Select {
		b.Output("topk", d)
	} else {
		for j, x := range signs {
			b.Output(fmt.Sprintf("signs/%d", j), x)
		}
	}
	if v.err != nil {
		return nil, v.err
	}
	return b.Build()
}

// MaskName names the stored mask plaintext of round r, comparison j and
// kind ("lo", "hi", "block", or "pad" with j = 0).
func MaskName(r, j int, kind string) string { return fmt.Sprintf("mask/%d/%d/%s", r, j, kind) }

// MaskValues returns the slot values of the mask MaskName(r, j, kind): 1 in
// the slots that take part, 0 elsewhere. Slot i holds entry e = i mod E of
// block i / E; its group position in round r is p = ⌊e / k^r⌋ mod k.
// "lo" keeps the slots whose partner p + j lies in the group (p + j < k),
// "hi" those whose partner wraps around (p + j ≥ k), "block" block
// (j − 1) mod B; with block packing "lo" and "hi" are also restricted to
// that block, and "pad" selects the blocks of the last packed ciphertext
// that hold no comparison.
func (s VecSearchShape) MaskValues(lay VecSearchLayout, r, j int, kind string) ([]float64, error) {
	stride := 1
	for i := 0; i < r; i++ {
		stride *= s.Way
	}
	out := make([]float64, lay.Slots)
	for i := range out {
		e, blk := i%lay.E, i/lay.E
		p := e / stride % s.Way
		inBlock := !s.Masks || blk == (j-1)%lay.Blocks
		var on bool
		switch kind {
		case "lo":
			on = inBlock && p+j < s.Way
		case "hi":
			on = inBlock && p+j >= s.Way
		case "block":
			on = blk == (j-1)%lay.Blocks
		case "pad":
			on = s.Masks && blk >= (s.Way-1)%lay.Blocks
		default:
			return nil, fmt.Errorf("workload: vecsearch: unknown mask kind %q", kind)
		}
		if on {
			out[i] = 1
		}
	}
	return out, nil
}

// engorgioBoot is the bootstrapping of the engorgio preset (N=2^17, 43
// levels): full slots, CoeffsToSlots and SlotsToCoeffs in 4 and 3 levels,
// EvalMod by a degree-30 cosine with 3 double angles (Lattigo v6's default
// bootstrapping.ParametersLiteral shape); 43 − (4 + 8 + 3) = 28 levels
// remain for the computation.
var engorgioBoot = ir.BootSpec{OutputLevel: 28, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 16}

// VecSearchFull returns the paper-scale shape of a variant: way 4 (VQ1) or
// 16 (VQ2), dimension 128 (S) or 1024 (L). Engorgio's VQ dimensions are not
// in the Rosemary paper (it says only that VQ_L fills more slots); 128 (a
// SIFT-sized vector) and 1024 (≈ GIST's 960, padded) are our choice.
func VecSearchFull(name string, way, dim int) VecSearchShape {
	boot := engorgioBoot
	return VecSearchShape{
		Name: name, Params: "engorgio", Entries: 10_000, Dim: dim, Way: way,
		// Cheon et al. 2020 composite f3∘f3∘g3∘g3 (dg = df = 2).
		Sign:    []SignPoly{SignG3, SignG3, SignF3, SignF3},
		DBLevel: 2, Masks: true, Select: true, Boot: &boot,
	}
}

// VecSearchSmall is the shape the small test runs for real on ckks-14
// (N=2^14, 7 levels, no bootstrapping): 1024 MNIST images pooled to 196
// dimensions, distances, synchronisation and one round of way-way
// comparisons through f3∘g3 (all 6 remaining levels), returning the signs.
func VecSearchSmall(name string, way int) VecSearchShape {
	return VecSearchShape{
		Name: name, Params: "ckks-14", Entries: 1024, Dim: 196, Way: way, Rounds: 1,
		Sign: []SignPoly{SignG3, SignF3}, DBLevel: 7,
	}
}

func init() {
	for _, v := range []struct {
		name, label string
		way, dim    int
	}{
		{"vecsearch-vq1-s", "VQ1_S", 4, 128},
		{"vecsearch-vq1-l", "VQ1_L", 4, 1024},
		{"vecsearch-vq2-s", "VQ2_S", 16, 128},
		{"vecsearch-vq2-l", "VQ2_L", 16, 1024},
	} {
		v := v
		register(Workload{
			Name: v.name,
			Description: fmt.Sprintf("Engorgio %s: encrypted %d-d distances over 10K entries, %d-way top-k with sign approximation and bootstrapping (CKKS N=2^17, L=43)",
				v.label, v.dim, v.way),
			Source: "Rosemary §Workloads: Engorgio [10] VQ1/VQ2 (§6.3, App. 9.4), 10K entries, N=2^17, L=43, logQP=3516; " +
				"sign: Cheon et al. ASIACRYPT'20 f3∘f3∘g3∘g3; k-way comparison: Hong et al. TIFS'21 k-sorter; " +
				"bootstrapping: Lattigo v6 default shape; dimensions 128/1024 and the tournament top-k are our choices",
			Full: func() (*ir.Program, error) {
				return VecSearchFull(v.name, v.way, v.dim).Program()
			},
			Small: func() (*ir.Program, error) {
				return VecSearchSmall(v.name+"-mnist", v.way).Program()
			},
		})
	}
}
