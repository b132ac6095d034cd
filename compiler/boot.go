package compiler

import (
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// ExpandBoot returns a copy of p in which every Boot node is replaced by the
// operations Lattigo v6.1.1's CKKS bootstrapping
// (circuits/ckks/bootstrapping/evaluator.go, Evaluator.bootstrap) performs
// for the node's BootSpec:
//
//	ScaleDown     → LevelDown to 0, CMult by the integer scale-up factor
//	ModUp         → ModRaise to the top level, CMult by the message scaling,
//	                then Trace when slots are sparse
//	CoeffsToSlots → one BSGS linear transformation + Rescale per DFT level,
//	                then the real/imaginary split (Conjugate, HSub, CMult by −i,
//	                HAdd, and a rotation by the slot count when sparse)
//	EvalMod       → scale and offset, Chebyshev polynomial (power basis +
//	                Paterson–Stockmeyer giant steps, polyeval.go), double-angle
//	                squarings, optional arcsine, default scale; applied to the
//	                real and the imaginary part when slots are full
//	SlotsToCoeffs → (CMult by i, HAdd when full) one BSGS linear transformation
//	                + Rescale per DFT level
//
// Nodes are renumbered and every reference is remapped; the result
// validates. Key switches (HRot, Conjugate, Relinearize) match Lattigo's
// one for one (each GetGaloisKey/GetRelinearizationKey call of Lattigo's
// per-ciphertext circuit, bootstrapping.Evaluator.Evaluate, is one node
// here, with the same Galois element; bootconst's spec_test.go checks
// this against an instrumented Lattigo run), and so do the levels
// (ModRaise target, EvalMod start, output) and the number of plaintext
// diagonals per DFT matrix.
// Every scalar of Lattigo's circuit — multiplications, the additions of
// constants (polynomial constant terms, T_0 in the Chebyshev recursion,
// the double-angle −√(2π) terms, the EvalMod interval offset), the
// scale-matching integer Lattigo's Sub applies in the Chebyshev recursion,
// and the changes of scale bookkeeping — is a CMult named by a lower.BootConst:
// the value depends on the parameters and on the operand's scale, so it is
// resolved where the node runs (engine.ConstantProvider). The plaintext
// diagonals of the DFT matrices become Stored public plaintexts (named
// <tag>/cts<m>/diag<d> and <tag>/stc<m>/diag<d>, d Lattigo's diagonal
// index, pre-rotated by the giant step as Lattigo encodes them), shared by
// Boot nodes with the same parameters and spec; the node holding each BSGS
// product is named by a lower.BootLinearTransform, so that an executor can run
// the product as Lattigo's hoisted program (lower.LinearTransform). With
// constants and diagonals from Lattigo's evaluator (package bootconst) the
// expansion run on the interpreter is Lattigo's bootstrapping bit for bit.
// Not modelled: the two key
// switches of the sparse-secret encapsulation (EphemeralSecretWeight > 0:
// ApplyEvaluationKey dense→sparse and GadgetProductHoisted sparse→dense in
// ModUp), which use evaluation keys that are neither Galois nor
// relinearization keys.
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

// konst emits a CMult applying the named constant c (its Name; the value
// is resolved when it runs, engine.ConstantProvider). Its Constant stays 1 for
// the cost model, which prices every CMult alike.
func (e *bootEmitter) konst(x int, c lower.BootConst) int {
	id := e.op(ir.OpCMult, e.level(x), 1, x)
	e.out.Nodes[id].Constant = 1
	e.out.Nodes[id].Name = c.String()
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
	ct := e.konst(e.down(x, 0), lower.BootConst{Kind: lower.ConstScaleDown})

	// ModUp (Evaluator.ModUp): ModRaise to the top of the chain, then
	// rlwe.Evaluator.Trace (core/rlwe/inner_sum.go) over the unused slot
	// dimensions when slots are sparse: a multiplication by gap⁻¹ and
	// LogN−1−LogSlots automorphisms X → X^{5^{2^i}}, i = LogSlots … LogN−2,
	// each added back.
	ct = e.op(ir.OpModRaise, b.top, 1, ct)
	ct = e.konst(ct, lower.BootConst{Kind: lower.ConstModUp})
	if !b.full {
		ct = e.konst(ct, lower.BootConst{Kind: lower.ConstTrace})
		for i := b.LogSlots; i < b.logN-1; i++ {
			ct = e.hadd(ct, e.rot(ct, 1<<i))
		}
	}

	// CoeffsToSlots (dft/dft.go, Evaluator.CoeffsToSlots with Format
	// RepackImagAsReal, as bootstrapping/parameters.go sets it).
	zV := e.dft(ct, b, true)
	ctReal := e.conj(zV)
	tmp := e.konst(e.hsub(zV, ctReal), lower.BootConst{Kind: lower.ConstMinusI}) // (zV − conj(zV))·(−i)
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
		ct = e.hadd(e.konst(ctImag, lower.BootConst{Kind: lower.ConstI}), ctReal)
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

// evalMod emits mod1.Evaluator.EvaluateAndScaleNew (circuits/ckks/mod1/
// mod1_evaluator.go) as bootstrapping.Evaluator.EvalMod calls it: drop to
// the EvalMod level, take the scaling factor as scale and add the interval
// offset (lower.ConstMod1In), the approximation of x mod 1 (even Chebyshev
// cosine, or odd Chebyshev sine), the double-angle steps (MulRelin(res,
// res), Add(res, res), Add(res, −√(2π)^(2^(i+1))), Rescale), the optional
// odd monomial arcsine polynomial, and the default scale (lower.ConstMod1Out).
func (e *bootEmitter) evalMod(ct int, b bootShape, level int) (int, error) {
	ct = e.konst(e.down(ct, level), lower.BootConst{Kind: lower.ConstMod1In})
	ct, err := e.polynomial(ct, b.EvalModDegree, true, b.SineEvalMod, 0)
	if err != nil {
		return 0, fmt.Errorf("EvalMod polynomial: %w", err)
	}
	for i := 0; i < b.DoubleAngle; i++ {
		ct = e.relin(e.hmult(ct, ct))
		ct = e.konst(e.hadd(ct, ct), lower.BootConst{Kind: lower.ConstDoubleAngle, Step: i})
		ct = e.rescale(ct)
	}
	if b.ArcSineDegree > 0 {
		if ct, err = e.polynomial(ct, b.ArcSineDegree, false, true, 1); err != nil {
			return 0, fmt.Errorf("arcsine polynomial: %w", err)
		}
	}
	return e.konst(ct, lower.BootConst{Kind: lower.ConstMod1Out}), nil
}
