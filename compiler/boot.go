package compiler

import (
	"fmt"
	"math/bits"
	"sort"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/mod1"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/ir"
)

// BootSpecFromLattigo returns the BootSpec of Lattigo bootstrapping
// parameters (as made by bootstrapping.NewParametersFromLiteral). It refuses
// the variants ExpandBoot does not model: several DFT matrices per level,
// bootstrapping iterations (META-BTS), ring-degree switching (residual N ≠
// bootstrapping N) and the conjugate-invariant ring.
func BootSpecFromLattigo(btp bootstrapping.Parameters) (ir.BootSpec, error) {
	bp := btp.BootstrappingParameters
	switch {
	case btp.IterationsParameters != nil:
		return ir.BootSpec{}, fmt.Errorf("compiler: boot spec: bootstrapping iterations are not modelled")
	case btp.ResidualParameters.RingType() != ring.Standard:
		return ir.BootSpec{}, fmt.Errorf("compiler: boot spec: only the standard ring is modelled")
	case btp.ResidualParameters.LogN() != bp.LogN():
		return ir.BootSpec{}, fmt.Errorf("compiler: boot spec: ring-degree switching (logN %d → %d) is not modelled", btp.ResidualParameters.LogN(), bp.LogN())
	}
	for _, m := range []struct {
		name   string
		levels []int
	}{{"CoeffsToSlots", btp.CoeffsToSlotsParameters.Levels}, {"SlotsToCoeffs", btp.SlotsToCoeffsParameters.Levels}} {
		for i, l := range m.levels {
			if l != 1 {
				return ir.BootSpec{}, fmt.Errorf("compiler: boot spec: %s level %d merges %d matrices; one per level is modelled", m.name, i, l)
			}
		}
	}
	evm, err := mod1.NewParametersFromLiteral(bp, btp.Mod1ParametersLiteral)
	if err != nil {
		return ir.BootSpec{}, fmt.Errorf("compiler: boot spec: %w", err)
	}
	return ir.BootSpec{
		OutputLevel:   btp.ResidualParameters.MaxLevel(),
		CtSLevels:     len(btp.CoeffsToSlotsParameters.Levels),
		StCLevels:     len(btp.SlotsToCoeffsParameters.Levels),
		EvalModDegree: evm.Mod1Poly.Degree(),
		DoubleAngle:   evm.DoubleAngle,
		LogSlots:      btp.CoeffsToSlotsParameters.LogSlots,
		LogN:          bp.LogN(),
		SineEvalMod:   evm.Mod1Type == mod1.SinContinuous,
		ArcSineDegree: btp.Mod1ParametersLiteral.Mod1InvDegree,
	}, nil
}

// ExpandBoot returns a copy of p in which every Boot node is replaced by the
// operations Lattigo v6.1.1's CKKS bootstrapping
// (circuits/ckks/bootstrapping/evaluator.go, Evaluator.bootstrap) performs
// for the node's BootSpec:
//
//	ScaleDown     → LevelDown to 0, CMult by the integer scale-up factor
//	ModUp         → ModRaise to the top level, then Trace when slots are sparse
//	CoeffsToSlots → one BSGS linear transformation + Rescale per DFT level,
//	                then the real/imaginary split (Conjugate, HSub, CMult by −i,
//	                HAdd, and a rotation by the slot count when sparse)
//	EvalMod       → Chebyshev polynomial (power basis + Paterson–Stockmeyer
//	                giant steps), double-angle squarings, optional arcsine;
//	                applied to the real and the imaginary part when slots are full
//	SlotsToCoeffs → (CMult by i, HAdd when full) one BSGS linear transformation
//	                + Rescale per DFT level
//
// Nodes are renumbered and every reference is remapped; the result
// validates. Key switches (HRot, Conjugate, Relinearize) match Lattigo's
// one for one (each GetGaloisKey/GetRelinearizationKey call of Lattigo's
// per-ciphertext circuit, bootstrapping.Evaluator.Evaluate, is one node
// here, with the same Galois element; boot_test.go checks this against an
// instrumented Lattigo run), and so do the levels (ModRaise target, EvalMod
// start, output) and the number of plaintext diagonals per DFT matrix.
// Not modelled: additions of
// plaintext constants (the IR has no constant-add; Lattigo's polynomial
// evaluator and EvalMod add a few), the scale-matching integer
// multiplications inside Lattigo's Add, and the two key switches of the
// sparse-secret encapsulation (EphemeralSecretWeight > 0: ApplyEvaluationKey
// dense→sparse and GadgetProductHoisted sparse→dense in ModUp), which use
// evaluation keys that are neither Galois nor relinearization keys.
// Constants of the emitted CMults are placeholders (1): only the shape of
// the computation matters to the compiler. The plaintext diagonals of the
// DFT matrices become Stored plaintexts, shared by Boot nodes with the same
// parameters and spec.
func ExpandBoot(p *ir.Program) (*ir.Program, error) {
	if p == nil {
		return nil, fmt.Errorf("compiler: expand boot: nil program")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("compiler: expand boot: input: %w", err)
	}
	e := &bootEmitter{out: &ir.Program{Name: p.Name}, shared: map[string]int{}}
	remap := make([]int, len(p.Nodes))
	for _, n := range p.Nodes {
		args := make([]int, len(n.Args))
		for i, a := range n.Args {
			args[i] = remap[a]
		}
		if n.Op != ir.OpBoot {
			c := n
			c.Args = args
			if len(args) == 0 {
				c.Args = n.Args
			}
			if n.Boot != nil {
				s := *n.Boot
				c.Boot = &s
			}
			remap[n.ID] = e.add(c)
			continue
		}
		start := len(e.out.Nodes)
		id, err := e.expand(n, args[0])
		if err != nil {
			return nil, fmt.Errorf("compiler: expand boot: node %d: %w", n.ID, err)
		}
		// Bootstrapping is a non-linear segment (ir.Node.Segment).
		for k := start; k < len(e.out.Nodes); k++ {
			e.out.Nodes[k].Segment = ir.NonLinear
		}
		remap[n.ID] = id
	}
	if err := e.out.Validate(); err != nil {
		return nil, fmt.Errorf("compiler: expand boot: result: %w", err)
	}
	return e.out, nil
}

// bootEmitter appends nodes to the expanded program. While a Boot node is
// expanded, params and count are those of the node.
type bootEmitter struct {
	out    *ir.Program
	shared map[string]int // name of a Stored DFT diagonal → node
	params string
	count  int64
	tag    string // prefix of the diagonal names of the current spec
}

func (e *bootEmitter) add(n ir.Node) int {
	n.ID = len(e.out.Nodes)
	e.out.Nodes = append(e.out.Nodes, n)
	return n.ID
}

func (e *bootEmitter) node(id int) ir.Node { return e.out.Nodes[id] }

func (e *bootEmitter) level(id int) int { return e.out.Nodes[id].Level }

func (e *bootEmitter) op(op ir.Op, level, degree int, args ...int) int {
	return e.add(ir.Node{Op: op, Args: args, Params: e.params, Level: level, Degree: degree, Count: e.count})
}

// down drops x to level l if it is above it (Lattigo operates on two
// operands at the lower of their levels; the IR makes that explicit).
func (e *bootEmitter) down(x, l int) int {
	if e.level(x) > l {
		return e.op(ir.OpLevelDown, l, e.node(x).Degree, x)
	}
	return x
}

func (e *bootEmitter) align(x, y int) (int, int) {
	l := min(e.level(x), e.level(y))
	return e.down(x, l), e.down(y, l)
}

func (e *bootEmitter) hadd(x, y int) int {
	x, y = e.align(x, y)
	return e.op(ir.OpHAdd, e.level(x), max(e.node(x).Degree, e.node(y).Degree), x, y)
}

func (e *bootEmitter) hsub(x, y int) int {
	x, y = e.align(x, y)
	return e.op(ir.OpHSub, e.level(x), max(e.node(x).Degree, e.node(y).Degree), x, y)
}

func (e *bootEmitter) hmult(x, y int) int {
	x, y = e.align(x, y)
	return e.op(ir.OpHMult, e.level(x), 2, x, y)
}

func (e *bootEmitter) relin(x int) int { return e.op(ir.OpRelinearize, e.level(x), 1, x) }

func (e *bootEmitter) rescale(x int) int { return e.op(ir.OpRescale, e.level(x)-1, 1, x) }

func (e *bootEmitter) conj(x int) int { return e.op(ir.OpConjugate, e.level(x), 1, x) }

func (e *bootEmitter) cmult(x int) int {
	id := e.op(ir.OpCMult, e.level(x), 1, x)
	e.out.Nodes[id].Constant = 1
	return id
}

func (e *bootEmitter) rot(x, k int) int {
	id := e.op(ir.OpHRot, e.level(x), 1, x)
	e.out.Nodes[id].Rotation = k
	return id
}

// diagonal returns the Stored plaintext holding one diagonal of a DFT matrix.
func (e *bootEmitter) diagonal(dft string, matrix, diag, level int) int {
	name := fmt.Sprintf("%s/%s%d/diag%d", e.tag, dft, matrix, diag)
	if id, ok := e.shared[name]; ok {
		return id
	}
	// Diagonals are public constants: the host can encode them as well.
	id := e.add(ir.Node{Op: ir.OpStored, Name: name, Params: e.params, Level: level, Degree: 0, Count: 1, Public: true})
	e.shared[name] = id
	return id
}

// bootShape is a BootSpec resolved against its parameter preset.
type bootShape struct {
	ir.BootSpec
	logN      int
	full      bool // LogSlots = LogN − 1: CoeffsToSlots yields real and imaginary parts
	evalDepth int  // levels EvalMod consumes
	top       int  // level after ModRaise
}

// resolveBoot checks a spec and derives the level budget. The top level is
// the output level plus the depths of the three phases, as Lattigo's
// bootstrapping.NewParametersFromLiteral lays out the moduli chain
// (parameters.go: S2C LevelQ = residual MaxLevel + len(StC levels),
// Mod1 LevelQ = S2C LevelQ + mod1.ParametersLiteral.Depth(), C2S LevelQ =
// Mod1 LevelQ + len(CtS levels)).
func resolveBoot(s ir.BootSpec, pr fhe.Preset) (bootShape, error) {
	b := bootShape{BootSpec: s, logN: s.LogN}
	if b.logN == 0 {
		b.logN = pr.LogN
	}
	switch {
	case b.logN < 2 || b.logN > 17:
		return b, fmt.Errorf("boot: logN %d outside [2, 17]", b.logN)
	case s.LogSlots < 1 || s.LogSlots > b.logN-1:
		return b, fmt.Errorf("boot: log slots %d outside [1, %d]", s.LogSlots, b.logN-1)
	case s.CtSLevels < 1 || s.CtSLevels > s.LogSlots:
		return b, fmt.Errorf("boot: CoeffsToSlots levels %d outside [1, log slots %d]", s.CtSLevels, s.LogSlots)
	case s.StCLevels < 1 || s.StCLevels > s.LogSlots:
		return b, fmt.Errorf("boot: SlotsToCoeffs levels %d outside [1, log slots %d]", s.StCLevels, s.LogSlots)
	case s.EvalModDegree < 2 || s.EvalModDegree > 1<<12:
		return b, fmt.Errorf("boot: EvalMod degree %d outside [2, 4096]", s.EvalModDegree)
	case s.DoubleAngle < 0 || s.DoubleAngle > 16:
		return b, fmt.Errorf("boot: double-angle count %d outside [0, 16]", s.DoubleAngle)
	case s.SineEvalMod && s.DoubleAngle != 0:
		return b, fmt.Errorf("boot: the sine EvalMod has no double angle (Lattigo refuses SinContinuous with DoubleAngle %d)", s.DoubleAngle)
	case s.ArcSineDegree < 0 || s.ArcSineDegree == 1 || s.ArcSineDegree > 1<<10:
		return b, fmt.Errorf("boot: arcsine degree %d must be 0 or in [2, 1024]", s.ArcSineDegree)
	case s.OutputLevel < 0:
		return b, fmt.Errorf("boot: output level %d is negative", s.OutputLevel)
	}
	b.full = s.LogSlots == b.logN-1
	// mod1.ParametersLiteral.Depth (mod1/mod1_parameters.go): bits.Len of
	// the degree, plus the double angles, plus bits.Len of the arcsine degree.
	b.evalDepth = bits.Len(uint(s.EvalModDegree)) + s.DoubleAngle + bits.Len(uint(s.ArcSineDegree))
	b.top = s.OutputLevel + s.StCLevels + b.evalDepth + s.CtSLevels
	if b.top > pr.Levels() {
		return b, fmt.Errorf("boot: needs level %d after ModRaise (output %d + SlotsToCoeffs %d + EvalMod %d + CoeffsToSlots %d), preset %s has %d",
			b.top, s.OutputLevel, s.StCLevels, b.evalDepth, s.CtSLevels, pr.Name, pr.Levels())
	}
	return b, nil
}

// expand emits the bootstrapping circuit of Boot node n applied to x and
// returns the node holding the result.
func (e *bootEmitter) expand(n ir.Node, x int) (int, error) {
	pr, err := fhe.Lookup(n.Params)
	if err != nil {
		return 0, err
	}
	if pr.Scheme != fhe.CKKS {
		return 0, fmt.Errorf("boot: preset %s is not CKKS", pr.Name)
	}
	b, err := resolveBoot(*n.Boot, pr)
	if err != nil {
		return 0, err
	}
	e.params, e.count = n.Params, n.Count
	// The diagonals depend on the DFT shape and, through their level, on
	// the top of the chain.
	e.tag = fmt.Sprintf("boot/%s/logn%d-slots%d-cts%d-stc%d-out%d-top%d", n.Params, b.logN, b.LogSlots, b.CtSLevels, b.StCLevels, b.OutputLevel, b.top)

	// ScaleDown (bootstrapping/evaluator.go, Evaluator.ScaleDown): drop
	// primes while Q_l/scale stays above q_l·MessageRatio — to level 0 for a
	// ciphertext at the default scale — then multiply by the integer
	// scale-up factor (no rescale at level 0).
	ct := e.cmult(e.down(x, 0))

	// ModUp (Evaluator.ModUp): ModRaise to the top of the chain, then
	// rlwe.Evaluator.Trace (core/rlwe/inner_sum.go) over the unused slot
	// dimensions when slots are sparse: a multiplication by gap⁻¹ and
	// LogN−1−LogSlots automorphisms X → X^{5^{2^i}}, i = LogSlots … LogN−2,
	// each added back.
	ct = e.op(ir.OpModRaise, b.top, 1, ct)
	if !b.full {
		ct = e.cmult(ct)
		for i := b.LogSlots; i < b.logN-1; i++ {
			ct = e.hadd(ct, e.rot(ct, 1<<i))
		}
	}

	// CoeffsToSlots (dft/dft.go, Evaluator.CoeffsToSlots with Format
	// RepackImagAsReal, as bootstrapping/parameters.go sets it).
	zV := e.dft(ct, b, true)
	ctReal := e.conj(zV)
	tmp := e.cmult(e.hsub(zV, ctReal)) // (zV − conj(zV))·(−i)
	ctReal = e.hadd(ctReal, zV)
	ctImag := -1
	if b.full {
		ctImag = tmp
	} else {
		ctReal = e.hadd(ctReal, e.rot(tmp, 1<<b.LogSlots))
	}

	// EvalMod (Evaluator.EvalMod → mod1/mod1_evaluator.go,
	// Evaluator.EvaluateAndScaleNew) on each part.
	mod1Level := b.top - b.CtSLevels
	if ctReal, err = e.evalMod(ctReal, b, mod1Level); err != nil {
		return 0, err
	}
	if ctImag >= 0 {
		if ctImag, err = e.evalMod(ctImag, b, mod1Level); err != nil {
			return 0, err
		}
	}

	// SlotsToCoeffs (dft/dft.go, Evaluator.SlotsToCoeffs): ctReal + i·ctImag
	// when full, then the decoding DFT starting at its LevelQ (Lattigo's
	// linear transformations work at min(LevelQ, ciphertext level)).
	ct = ctReal
	if ctImag >= 0 {
		ct = e.hadd(e.cmult(ctImag), ctReal)
	}
	stcLevel := b.OutputLevel + b.StCLevels
	if e.level(ct) < stcLevel {
		return 0, fmt.Errorf("boot: EvalMod ends at level %d below the SlotsToCoeffs level %d", e.level(ct), stcLevel)
	}
	ct = e.dft(e.down(ct, stcLevel), b, false)
	if e.level(ct) != b.OutputLevel {
		return 0, fmt.Errorf("boot: expansion ends at level %d, spec says %d", e.level(ct), b.OutputLevel)
	}
	return ct, nil
}

// dft emits lintrans.Evaluator.EvaluateSequential
// (circuits/common/lintrans/lintrans_evaluator.go) over the matrices of one
// homomorphic DFT: per matrix one BSGS product and one Rescale.
func (e *bootEmitter) dft(ct int, b bootShape, encode bool) int {
	levels, name := b.StCLevels, "stc"
	if encode {
		levels, name = b.CtSLevels, "cts"
	}
	// dft.NewMatrixFromLiteral: the matrices act on 2·slots values when
	// the slots are sparse (RepackImagAsReal packs the imaginary parts into
	// the second half).
	dslots := 1 << b.LogSlots
	if !b.full {
		dslots <<= 1
	}
	for m, diags := range dftDiagonals(b.LogSlots, b.logN, levels, encode) {
		ct = e.rescale(e.bsgs(ct, diags, dslots, name, m))
	}
	return ct
}

// bsgs emits lintrans.Evaluator.MultiplyByDiagMatrixBSGS (after
// PreRotatedCiphertextForDiagonalMatrixMultiplication) for a matrix with
// the given non-zero diagonals: one (hoisted) rotation per distinct
// non-zero baby step, one PMult per diagonal, HAdds within each giant-step
// group, one rotation per non-zero giant step, HAdds across the groups.
// The BSGS split is Lattigo's: LogBabyStepGiantStepRatio 1 (bootstrapping/
// parameters.go), N1 from FindBestBSGSRatio, groups from BSGSIndex
// (circuits/common/lintrans/lintrans.go).
func (e *bootEmitter) bsgs(ct int, diags []int, slots int, dft string, matrix int) int {
	n1 := bestBSGSRatio(diags, slots, 1)
	index, giant, baby := bsgsIndex(diags, slots, n1)
	rotated := map[int]int{0: ct}
	for _, i := range baby {
		if i != 0 {
			rotated[i] = e.rot(ct, i)
		}
	}
	level := e.level(ct)
	acc := -1
	for _, j := range giant {
		inner := -1
		for _, i := range index[j] {
			t := e.op(ir.OpPMult, level, 1, rotated[i], e.diagonal(dft, matrix, j+i, level))
			if inner < 0 {
				inner = t
			} else {
				inner = e.hadd(inner, t)
			}
		}
		if j != 0 {
			inner = e.rot(inner, j)
		}
		if acc < 0 {
			acc = inner
		} else {
			acc = e.hadd(acc, inner)
		}
	}
	return acc
}

// dftDiagonals returns, for each matrix of a homomorphic DFT over 2^logSlots
// slots factored into `depth` matrices (one per level, Lattigo's default
// Levels = [1, 1, …]), the indices of its non-zero diagonals. It follows
// dft.MatrixLiteral.computeBootstrappingDFTIndexMap (circuits/ckks/dft/
// dft.go) for Format RepackImagAsReal and BitReversed false: the logSlots
// radix-2 butterfly stages are merged ⌈remaining/(matrices left)⌉ at a time
// (front-loaded for the encoding, back-loaded for the decoding); a stage
// acting at distance r turns each diagonal d into d, d+r and d−r. When
// slots are sparse the first decoding matrix starts from the repacking
// matrix (diagonals 0 and slots) and works modulo 2·slots.
func dftDiagonals(logSlots, logN, depth int, encode bool) [][]int {
	merge := make([]int, depth)
	left := logSlots
	for i := 0; i < depth; i++ {
		d := (left + depth - i - 1) / (depth - i) // ⌈left/(depth−i)⌉
		if encode {
			merge[i] = d
		} else {
			merge[depth-1-i] = d
		}
		left -= d
	}
	// stage returns the butterfly distance of FFT stage `level`.
	stage := func(level, mod int) int {
		if encode {
			return (1 << (level - 1)) & (mod - 1)
		}
		return (1 << (logSlots - level)) & (mod - 1)
	}
	slots := 1 << logSlots
	out := make([][]int, depth)
	level := logSlots
	for i := 0; i < depth; i++ {
		var set map[int]bool
		mod, next, extra := slots, level-1, merge[i]-1
		if logSlots < logN-1 && !encode && i == 0 {
			mod = 2 * slots
			set = map[int]bool{0: true, slots: true}
			next, extra = level, merge[i]
		} else {
			r := stage(level, slots)
			set = map[int]bool{0: true, r: true, slots - r: true}
		}
		for k := 0; k < extra; k++ {
			r := stage(next, mod)
			grown := make(map[int]bool, 3*len(set))
			for d := range set {
				grown[d] = true
				grown[(d+r)&(mod-1)] = true
				grown[(d-r)&(mod-1)] = true
			}
			set = grown
			next--
		}
		out[i] = sortedKeys(set)
		level -= merge[i]
	}
	return out
}

func sortedKeys(m map[int]bool) []int {
	s := make([]int, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Ints(s)
	return s
}

// bsgsIndex groups diagonals by giant step ⌊d/n1⌋·n1 with baby steps d mod
// n1 (lintrans.BSGSIndex). It returns the groups and the sorted distinct
// giant and baby steps.
func bsgsIndex(diags []int, slots, n1 int) (index map[int][]int, giant, baby []int) {
	index = map[int][]int{}
	g, b := map[int]bool{}, map[int]bool{}
	for _, d := range diags {
		d &= slots - 1
		j := (d / n1 * n1) & (slots - 1)
		i := d & (n1 - 1)
		index[j] = append(index[j], i)
		g[j], b[i] = true, true
	}
	for j := range index {
		sort.Ints(index[j])
	}
	return index, sortedKeys(g), sortedKeys(b)
}

// bestBSGSRatio is lintrans.FindBestBSGSRatio: the smallest power of two
// n1 at which (baby steps − 1)/(giant steps − 1) reaches 2^logRatio (halved
// if it overshoots). At n1 = 1 the ratio is 0 (or NaN), so the result is
// never 0 and Lattigo's non-BSGS path (N1 = 0) is not taken.
func bestBSGSRatio(diags []int, slots, logRatio int) int {
	ratio := float64(int(1) << logRatio)
	for n1 := 1; n1 < slots; n1 <<= 1 {
		_, giant, baby := bsgsIndex(diags, slots, n1)
		r := float64(len(baby)-1) / float64(len(giant)-1) // +Inf/NaN as in Lattigo
		if r == ratio {
			return n1
		}
		if r > ratio {
			return n1 / 2
		}
	}
	return 1
}

// evalMod emits mod1.Evaluator.EvaluateAndScaleNew (circuits/ckks/mod1/
// mod1_evaluator.go): drop to the EvalMod level, the approximation of
// x mod 1 (even Chebyshev cosine, or odd Chebyshev sine), the double-angle
// steps (MulRelin(res, res), Add(res, res), Rescale; the −√(2π) constant
// is not modelled) and the optional odd monomial arcsine polynomial.
func (e *bootEmitter) evalMod(ct int, b bootShape, level int) (int, error) {
	ct = e.down(ct, level)
	ct, err := e.polynomial(ct, b.EvalModDegree, true, b.SineEvalMod)
	if err != nil {
		return 0, fmt.Errorf("EvalMod polynomial: %w", err)
	}
	for i := 0; i < b.DoubleAngle; i++ {
		ct = e.relin(e.hmult(ct, ct))
		ct = e.rescale(e.hadd(ct, ct))
	}
	if b.ArcSineDegree > 0 {
		if ct, err = e.polynomial(ct, b.ArcSineDegree, false, true); err != nil {
			return 0, fmt.Errorf("arcsine polynomial: %w", err)
		}
	}
	return ct, nil
}

// psPoly is the shape of one polynomial in Lattigo's Paterson–Stockmeyer
// recursion (circuits/common/polynomial/polynomial.go, Polynomial):
// degree = len(Coeffs)−1, MaxDeg, Lead, and the level its baby step is
// evaluated at.
type psPoly struct {
	degree, maxDeg int
	lead           bool
	level          int
}

// polyEval is one run of polynomial.Evaluator.Evaluate
// (circuits/common/polynomial/polynomial_evaluator.go) on a polynomial
// that is either even or odd (the EvalMod polynomials are).
type polyEval struct {
	e          *bootEmitter
	chebyshev  bool
	even, odd  bool
	pow        map[int]int // power basis: k → node of T_k(x) (or x^k)
	iterations int
}

// polynomial emits the evaluation of a degree-`degree` polynomial in x
// (Chebyshev basis, or monomial), even (odd = false) or odd.
func (e *bootEmitter) polynomial(x, degree int, chebyshev, odd bool) (int, error) {
	pe := &polyEval{e: e, chebyshev: chebyshev, even: !odd, odd: odd, pow: map[int]int{1: x}}
	logDegree := bits.Len(uint(degree))
	logSplit := optimalSplit(logDegree)
	// Evaluate: the largest power of two below the degree, then the
	// baby-step powers of the right parity.
	if err := pe.genPower(1 << (logDegree - 1)); err != nil {
		return 0, err
	}
	for i := 1<<logSplit - 1; i > 2; i-- {
		if (i&1 == 0 && pe.even) || (i&1 == 1 && pe.odd) {
			if err := pe.genPower(i); err != nil {
				return 0, err
			}
		}
	}
	// PatersonStockmeyerPolynomial: the split and the level of each baby
	// step (ckks/polynomial simEvaluator: one level per rescale).
	target := e.level(x) - (logDegree - 1)
	var ps []psPoly
	if err := pe.recursePS(logSplit, target, psPoly{degree: degree, maxDeg: degree, lead: true}, &ps); err != nil {
		return 0, err
	}
	// EvaluatePatersonStockmeyerPolynomialVector.
	type step struct{ degree, ct int }
	steps := make([]*step, len(ps))
	for i := range ps {
		ct, err := pe.babyStep(ps[i])
		if err != nil {
			return 0, err
		}
		steps[len(ps)-1-i] = &step{degree: ps[i].degree, ct: ct}
	}
	for rounds := 0; len(steps) != 1; rounds++ {
		if rounds > 64 {
			return 0, fmt.Errorf("giant steps do not converge")
		}
		giant := make([]int, len(steps))
		for i := 0; i < len(steps); i++ {
			if i == len(steps)-1 {
				giant[i] = 2
			} else if steps[i].degree == steps[i+1].degree {
				giant[i] = 1
				i++
			}
		}
		for i := 0; i < len(steps); i++ {
			switch giant[i] {
			case 2:
				steps[i].degree = steps[i-1].degree
			case 1:
				even, odd := steps[i], steps[i+1]
				deg := 1 << bits.Len(uint(even.degree))
				xpow, ok := pe.pow[deg]
				if !ok {
					return 0, fmt.Errorf("giant step needs power %d, not in the basis", deg)
				}
				// EvaluateMonomial(a = even, b = odd, X^deg).
				bct := odd.ct
				if e.node(bct).Degree == 2 {
					bct = e.relin(bct)
				}
				bct = e.hmult(e.rescale(bct), xpow)
				odd.ct = e.hadd(bct, even.ct)
				odd.degree = 2*deg - 1
				steps[i] = nil
			}
		}
		k := 0
		for _, s := range steps {
			if s != nil {
				steps[k] = s
				k++
			}
		}
		steps = steps[:k]
	}
	res := steps[0].ct
	if e.node(res).Degree == 2 {
		res = e.relin(res)
	}
	return e.rescale(res), nil
}

// optimalSplit is bignum.OptimalSplit (utils/bignum/polynomial.go).
func optimalSplit(logDegree int) int {
	s := logDegree >> 1
	a := 1<<s + 1<<(logDegree-s) + logDegree - s - 3
	b := 1<<(s+1) + 1<<(logDegree-s-1) + logDegree - s - 4
	if a > b {
		s++
	}
	return s
}

// splitDegree is polynomial.SplitDegree (power_basis.go): T_n from
// T_a·T_b.
func splitDegree(n int) (int, int) {
	if n&(n-1) == 0 {
		return n / 2, n / 2
	}
	k := bits.Len(uint(n-1)) - 1
	return 1<<k - 1, n + 1 - 1<<k
}

// genPower is PowerBasis.GenPower with lazy = false: make T_n and rescale it.
func (pe *polyEval) genPower(n int) error {
	if _, ok := pe.pow[n]; ok {
		return nil
	}
	fresh, err := pe.genPowerRec(n)
	if err != nil {
		return err
	}
	if fresh {
		pe.pow[n] = pe.e.rescale(pe.pow[n])
	}
	return nil
}

// genPowerRec is PowerBasis.genPower (lazy = false): T_n = 2·T_a·T_b − T_|a−b|
// (Chebyshev; x^a·x^b for monomials) with MulRelin; freshly made operands
// are rescaled first. It reports whether T_n was made (and so still needs
// its rescale).
func (pe *polyEval) genPowerRec(n int) (bool, error) {
	if _, ok := pe.pow[n]; ok {
		return false, nil
	}
	pe.iterations++
	if n < 2 || pe.iterations > 1<<16 {
		return false, fmt.Errorf("power basis: cannot make power %d", n)
	}
	a, b := splitDegree(n)
	freshA, err := pe.genPowerRec(a)
	if err != nil {
		return false, err
	}
	freshB, err := pe.genPowerRec(b)
	if err != nil {
		return false, err
	}
	e := pe.e
	if freshA {
		pe.pow[a] = e.rescale(pe.pow[a])
	}
	if freshB {
		pe.pow[b] = e.rescale(pe.pow[b])
	}
	t := e.relin(e.hmult(pe.pow[a], pe.pow[b]))
	if pe.chebyshev {
		t = e.hadd(t, t)
		if c := a - b; c != 0 { // c = 0: T_0 = 1 is a constant (not modelled)
			if c < 0 {
				c = -c
			}
			pe.pow[n] = t
			if err := pe.genPower(c); err != nil {
				return false, err
			}
			t = e.hsub(pe.pow[n], pe.pow[c])
		}
	}
	pe.pow[n] = t
	return true, nil
}

// recursePS is polynomial.recursePS: split p at the next power of two
// nextPower ≥ the base with p = q·T_nextPower + r, q one level higher.
func (pe *polyEval) recursePS(logSplit, target int, p psPoly, out *[]psPoly) error {
	pe.iterations++
	if pe.iterations > 1<<16 {
		return fmt.Errorf("Paterson–Stockmeyer split does not terminate")
	}
	if p.degree < 1<<logSplit {
		if p.lead && logSplit > 1 && p.maxDeg > 1<<bits.Len(uint(p.maxDeg))-1<<(logSplit-1) {
			return pe.recursePS(optimalSplit(bits.Len(uint(p.degree))), target, p, out)
		}
		p.level = target
		*out = append(*out, p)
		return nil
	}
	next := 1 << logSplit
	for next < p.degree>>1+1 {
		next <<= 1
	}
	// bignum.Polynomial.Factorize / polynomial.Polynomial.Factorize.
	q := psPoly{degree: p.degree - next, maxDeg: p.maxDeg, lead: p.lead}
	r := psPoly{degree: next - 1, maxDeg: next - 1}
	if p.maxDeg != p.degree {
		r.maxDeg = p.maxDeg - (p.degree - next + 1)
	}
	if err := pe.recursePS(logSplit, target+1, q, out); err != nil {
		return err
	}
	return pe.recursePS(logSplit, target, r, out)
}

// babyStep is EvaluatePolynomialVectorFromPowerBasis for one baby-step
// polynomial: Σ c_k·T_k over the keys k of the right parity, at the baby
// step's level. A polynomial with only a constant term becomes a fresh
// ciphertext holding the constant in Lattigo; it is modelled as a CMult of
// T_1 (by 0) so that the DAG stays connected.
func (pe *polyEval) babyStep(p psPoly) (int, error) {
	e := pe.e
	minDeg := p.degree
	if pe.even && !pe.odd {
		minDeg--
	}
	if minDeg <= 0 {
		return e.cmult(e.down(pe.pow[1], p.level)), nil
	}
	res := -1
	for k := p.degree; k > 0; k-- {
		if !((k&1 == 0 && pe.even) || (k&1 == 1 && pe.odd)) {
			continue
		}
		xk, ok := pe.pow[k]
		if !ok {
			return 0, fmt.Errorf("baby step needs power %d, not in the basis", k)
		}
		if e.level(xk) < p.level {
			return 0, fmt.Errorf("power %d at level %d below baby-step level %d", k, e.level(xk), p.level)
		}
		t := e.cmult(e.down(xk, p.level))
		if res < 0 {
			res = t
		} else {
			res = e.hadd(res, t)
		}
	}
	return res, nil
}
