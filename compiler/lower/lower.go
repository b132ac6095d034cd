package lower

import (
	"fmt"
	"math/big"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Object describes one operand object of a lowered operation. Limb l of
// polynomial p is object limb p·Limbs + l. Ciphertext limbs are moduli
// q_0…q_level; key limbs are q_0…q_L then p_0…p_{α−1}, and a key's
// polynomials are (digit, component) pairs: 2·digit + component.
type Object struct {
	Role  string // ct0, ct1, pt, rlk, gk, out
	Space isa.Space
	ID    int
	Polys int
	Limbs int
}

// Program is one homomorphic operation as an mProgram with its calling
// convention: the host places Inputs in device DRAM, keys sit in NAND, the
// result is read back from Output.
type Program struct {
	Op      ir.Op
	Program *isa.Program
	Inputs  []Object
	Keys    []Object
	Output  Object
	// GaloisElement is the automorphism of HRot/Conjugate (its key is Keys[0]).
	GaloisElement uint64
}

// Ring is what lowering needs to know about the parameters: the ring
// degree and the primes of Q and P.
type Ring struct {
	LogN int
	Q, P []uint64
}

// RingOf returns the Ring of Lattigo parameters.
func RingOf(p rlwe.Parameters) Ring {
	return Ring{LogN: p.LogN(), Q: p.Q(), P: p.P()}
}

// MaxLevel is the top level (primes in Q minus one).
func (r Ring) MaxLevel() int { return len(r.Q) - 1 }

// GaloisElement returns 5^k mod 2N, the automorphism that rotates slots left
// by k (the element Lattigo uses).
func (r Ring) GaloisElement(k int) uint64 {
	twoN := uint64(2) << r.LogN
	return rns.ModExp(5, uint64(k)&(twoN-1), twoN)
}

// ConjugateElement returns 2N − 1 (complex conjugation / BGV row swap).
func (r Ring) ConjugateElement() uint64 { return uint64(2)<<r.LogN - 1 }

// Context gives the parameters and arguments of the operation.
type Context struct {
	Scheme fhe.Scheme
	Ring   Ring
	T      uint64 // BGV plaintext modulus
	Level  int    // level of the ciphertext operands

	Rotation int      // HRot: slots to rotate left
	Constant []uint64 // CMult: the constant in RNS, one residue per q_0…q_level
	// TargetLevel is the level ModRaise lifts a level-0 ciphertext to.
	TargetLevel int
	// Depth is the tree depth of an expansion step (OpExpandStep).
	Depth int
}

// Object IDs of the calling convention.
const (
	objIn0 = 1
	objIn1 = 2
	objOut = 3
	objKey = 1 // in NAND
)

// lowering carries the state shared by the helpers of one operation.
type lowering struct {
	*builder
	ctx    *Context
	level  int
	nQ, nP int // primes in Q (at the top level) and in P
}

func newLowering(ctx *Context) (*lowering, error) {
	r := ctx.Ring
	if len(r.Q) == 0 || len(r.P) == 0 {
		return nil, fmt.Errorf("lower: lowering needs Q and P primes (got %d, %d)", len(r.Q), len(r.P))
	}
	if len(r.Q)+len(r.P) > 256 {
		return nil, fmt.Errorf("lower: %d primes exceed the 256 moduli an mProgram can name", len(r.Q)+len(r.P))
	}
	if ctx.Level < 0 || ctx.Level > r.MaxLevel() {
		return nil, fmt.Errorf("lower: level %d outside [0, %d]", ctx.Level, r.MaxLevel())
	}
	moduli := append(append([]uint64(nil), r.Q...), r.P...)
	return &lowering{builder: newBuilder(r.LogN, moduli), ctx: ctx, level: ctx.Level, nQ: len(r.Q), nP: len(r.P)}, nil
}

type poly []isa.Addr // one slot per limb q_0…q_level

func (l *lowering) loadPoly(space isa.Space, obj, p, limbsPerPoly int) poly {
	out := make(poly, l.level+1)
	for i := range out {
		out[i] = l.alloc()
		l.emit(isa.Instr{Op: isa.OpLD, Mod: uint8(i), A: isa.Obj(space, obj, p*limbsPerPoly+i), Out: out[i]})
	}
	return out
}

func (l *lowering) loadCt(obj, polys int) []poly {
	ct := make([]poly, polys)
	for p := range ct {
		ct[p] = l.loadPoly(isa.SpaceDRAM, obj, p, l.level+1)
	}
	return ct
}

func (l *lowering) storeCt(ct []poly) {
	for p, pl := range ct {
		for i, a := range pl {
			l.emit(isa.Instr{Op: isa.OpST, Mod: uint8(i), A: a, Out: isa.Obj(isa.SpaceDRAM, objOut, p*(l.level+1)+i)})
		}
	}
}

func (l *lowering) ctObj(role string, id, polys int) Object {
	return Object{Role: role, Space: isa.SpaceDRAM, ID: id, Polys: polys, Limbs: l.level + 1}
}

// Op lowers one homomorphic operation.
func Op(op ir.Op, ctx *Context) (*Program, error) {
	switch ctx.Scheme {
	case fhe.CKKS, fhe.BGV:
	default:
		return nil, fmt.Errorf("lower: unknown scheme %q", ctx.Scheme)
	}
	l, err := newLowering(ctx)
	if err != nil {
		return nil, err
	}
	res := &Program{Op: op}
	switch op {
	case ir.OpHAdd, ir.OpHSub:
		a, b := l.loadCt(objIn0, 2), l.loadCt(objIn1, 2)
		code := isa.OpModAdd
		if op == ir.OpHSub {
			code = isa.OpModSub
		}
		for p := range a {
			for i := range a[p] {
				l.op(code, i, 0, a[p][i], b[p][i], a[p][i])
			}
		}
		l.storeCt(a)
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2), l.ctObj("ct1", objIn1, 2)}
		res.Output = l.ctObj("out", objOut, 2)
	case ir.OpPMult:
		a := l.loadCt(objIn0, 2)
		pt := l.loadCt(objIn1, 1)[0]
		l.mulPlain(a, pt, ctx.Scheme == fhe.BGV)
		l.storeCt(a)
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2), l.ctObj("pt", objIn1, 1)}
		res.Output = l.ctObj("out", objOut, 2)
	case OpPMultCompact:
		if ctx.Scheme != fhe.BGV {
			return nil, fmt.Errorf("lower: compact plaintexts are BGV plaintexts, not %s", ctx.Scheme)
		}
		a := l.loadCt(objIn0, 2)
		l.mulPlain(a, l.liftCompact(objIn1), false)
		l.storeCt(a)
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2), {Role: "pt", Space: isa.SpaceDRAM, ID: objIn1, Polys: 1, Limbs: 1}}
		res.Output = l.ctObj("out", objOut, 2)
	case ir.OpCMult:
		if len(ctx.Constant) != l.level+1 {
			return nil, fmt.Errorf("lower: CMult needs %d RNS residues, got %d", l.level+1, len(ctx.Constant))
		}
		a := l.loadCt(objIn0, 2)
		for p := range a {
			for i := range a[p] {
				if ctx.Constant[i] >= ctx.Ring.Q[i] {
					return nil, fmt.Errorf("lower: CMult residue %d not reduced", i)
				}
				l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, a[p][i], l.scalar(ctx.Constant[i]), a[p][i])
			}
		}
		l.storeCt(a)
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2)}
		res.Output = l.ctObj("out", objOut, 2)
	case ir.OpHMult:
		a, b := l.loadCt(objIn0, 2), l.loadCt(objIn1, 2)
		l.storeCt(l.tensor(a, b))
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2), l.ctObj("ct1", objIn1, 2)}
		res.Output = l.ctObj("out", objOut, 3)
	case ir.OpRelinearize:
		d := l.loadCt(objIn0, 3)
		l.storeCt(l.relinearize(d))
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 3)}
		res.Keys = []Object{l.keyObj("rlk")}
		res.Output = l.ctObj("out", objOut, 2)
	case opHMultRelin:
		a, b := l.loadCt(objIn0, 2), l.loadCt(objIn1, 2)
		l.storeCt(l.relinearize(l.tensor(a, b)))
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2), l.ctObj("ct1", objIn1, 2)}
		res.Keys = []Object{l.keyObj("rlk")}
		res.Output = l.ctObj("out", objOut, 2)
	case ir.OpHRot, ir.OpConjugate:
		var gal uint64
		if op == ir.OpHRot {
			gal = ctx.Ring.GaloisElement(ctx.Rotation)
		} else {
			gal = ctx.Ring.ConjugateElement()
		}
		a := l.loadCt(objIn0, 2)
		l.storeCt(l.automorphism(a, gal))
		res.GaloisElement = gal
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2)}
		res.Keys = []Object{l.keyObj("gk")}
		res.Output = l.ctObj("out", objOut, 2)
	case OpExpandStep:
		if ctx.Depth < 0 || ctx.Depth > ctx.Ring.LogN-2 {
			return nil, fmt.Errorf("lower: expansion step at depth %d outside [0, %d]", ctx.Depth, ctx.Ring.LogN-2)
		}
		gal := ExpandGalois(ctx.Ring.LogN, ctx.Depth)
		a := l.loadCt(objIn0, 2)
		mono := l.loadPoly(isa.SpaceDRAM, objIn1, 0, l.level+1)
		aut := l.automorphism(a, gal)
		even := make([]poly, 2)
		for p := range a {
			even[p] = make(poly, l.level+1)
			for i := range a[p] {
				even[p][i] = l.alloc()
				l.op(isa.OpModAdd, i, 0, a[p][i], aut[p][i], even[p][i])
				l.op(isa.OpModSub, i, 0, a[p][i], aut[p][i], a[p][i])
				l.op(isa.OpModMul, i, isa.FlagPlain, a[p][i], mono[i], a[p][i])
			}
		}
		l.storeCt(append(even, a...))
		res.GaloisElement = gal
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2), l.ctObj("mono", objIn1, 1)}
		res.Keys = []Object{l.keyObj("gk")}
		res.Output = l.ctObj("out", objOut, 4)
	case ir.OpModRaise:
		if l.level != 0 || ctx.TargetLevel < 1 || ctx.TargetLevel > ctx.Ring.MaxLevel() {
			return nil, fmt.Errorf("lower: ModRaise lifts level 0 to a level in [1, %d], got %d → %d", ctx.Ring.MaxLevel(), l.level, ctx.TargetLevel)
		}
		a := l.loadCt(objIn0, 2)
		out := l.modRaise(a, ctx.TargetLevel)
		l.level = ctx.TargetLevel
		l.storeCt(out)
		l.level = 0
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2)}
		res.Output = Object{Role: "out", Space: isa.SpaceDRAM, ID: objOut, Polys: 2, Limbs: ctx.TargetLevel + 1}
	case ir.OpLWEScan:
		if res.Inputs, res.Output, err = l.lweScan(); err != nil {
			return nil, err
		}
	case ir.OpRescale:
		if l.level == 0 {
			return nil, fmt.Errorf("lower: cannot rescale at level 0")
		}
		a := l.loadCt(objIn0, 2)
		out := l.rescale(a)
		l.level-- // the output has one limb fewer
		l.storeCt(out)
		l.level++
		res.Inputs = []Object{l.ctObj("ct0", objIn0, 2)}
		res.Output = Object{Role: "out", Space: isa.SpaceDRAM, ID: objOut, Polys: 2, Limbs: l.level}
	default:
		return nil, fmt.Errorf("lower: no lowering for %q", op)
	}
	prog, err := l.program()
	if err != nil {
		return nil, err
	}
	res.Program = prog
	return res, nil
}

// OpPMultCompact is PMult by a compact plaintext (ir.Node.Compact): the
// plaintext object is one limb of coefficients modulo t, lifted to every
// q_i and to NTT form on the fly (liftCompact).
const OpPMultCompact ir.Op = "PMult(compact)"

// OpExpandStep is one step of a query expansion (ir.OpExpand): from a
// tree node c at depth j it computes both children, c + σ(c) (polys 0, 1
// of the output) and (c − σ(c))·X^(−2^j) (polys 2, 3), σ the automorphism
// X → X^(N/2^j + 1) with its key switch. The monomial arrives as input
// object 2 in NTT form (ExpandMonomial), multiplied without the t factor of
// a BGV plaintext: the step is exact, as in Lattigo's
// RingPackingEvaluator.Expand.
const OpExpandStep ir.Op = "Expand(step)"

// ExpandGalois is the automorphism of expansion depth j: N/2^j + 1.
func ExpandGalois(logN, j int) uint64 { return uint64(1)<<(logN-j) + 1 }

// NodeOp is the operation node n of p is lowered as: its own, or
// OpPMultCompact for a PMult whose plaintext is stored compact.
func NodeOp(p *ir.Program, n ir.Node) ir.Op {
	if n.Op == ir.OpPMult && len(n.Args) == 2 && p.Nodes[n.Args[1]].Compact {
		return OpPMultCompact
	}
	return n.Op
}

// liftCompact loads a compact plaintext into one slot per limb: the stored
// coefficients m < t < q_i are read once (as residues mod q_0), copied as
// residues modulo every other q_i (a MODADD of 0: m is below each q_i), and
// each copy goes to NTT form. Lattigo's plaintext for PMult is
// NTT(m·t⁻¹ mod q_i) and mulPlain multiplies it by t, so NTT(m) is that
// product exactly: the compact product skips the t factor.
func (l *lowering) liftCompact(obj int) poly {
	out := make(poly, l.level+1)
	out[0] = l.alloc()
	l.emit(isa.Instr{Op: isa.OpLD, Mod: 0, A: isa.Obj(isa.SpaceDRAM, obj, 0), Out: out[0]})
	for i := 1; i < len(out); i++ {
		out[i] = l.alloc()
		l.op(isa.OpModAdd, i, isa.FlagScalarB, out[0], l.scalar(0), out[i])
	}
	for i := range out {
		l.ntt(i, out[i], out[i])
	}
	return out
}

// opHMultRelin is the fused HMult + Relinearize (Lattigo's MulRelin).
const opHMultRelin ir.Op = "HMult+Relinearize"

// MulRelin lowers HMult followed by Relinearize as one program.
func MulRelin(ctx *Context) (*Program, error) { return Op(opHMultRelin, ctx) }

// mulPlain multiplies a ciphertext by a plaintext in place. CKKS: ct·pt;
// BGV (scaleT): Lattigo multiplies by t as well (its tMontgomery factor).
func (l *lowering) mulPlain(a []poly, pt poly, scaleT bool) {
	for i := range pt {
		if scaleT {
			l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, pt[i], l.scalar(l.ctx.T%l.cfg.Moduli[i]), pt[i])
		}
		for p := range a {
			l.op(isa.OpModMul, i, isa.FlagPlain, a[p][i], pt[i], a[p][i])
		}
	}
}

// tensor returns (a0b0, a0b1 + a1b0, a1b1), times t for BGV.
func (l *lowering) tensor(a, b []poly) []poly {
	d := []poly{make(poly, l.level+1), make(poly, l.level+1), make(poly, l.level+1)}
	for i := 0; i <= l.level; i++ {
		if l.ctx.Scheme == fhe.BGV {
			t := l.scalar(l.ctx.T % l.cfg.Moduli[i])
			l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, a[0][i], t, a[0][i])
			l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, a[1][i], t, a[1][i])
		}
		d[0][i], d[1][i], d[2][i] = l.alloc(), l.alloc(), l.alloc()
		l.op(isa.OpModMul, i, isa.FlagPlain, a[0][i], b[0][i], d[0][i])
		l.op(isa.OpModMul, i, isa.FlagPlain, a[0][i], b[1][i], d[1][i])
		l.op(isa.OpModMAC, i, isa.FlagPlain, a[1][i], b[0][i], d[1][i])
		l.op(isa.OpModMul, i, isa.FlagPlain, a[1][i], b[1][i], d[2][i])
		l.release(a[0][i], a[1][i], b[0][i], b[1][i])
	}
	return d
}

func (l *lowering) relinearize(d []poly) []poly {
	k0, k1 := l.keySwitch(d[2])
	for i := 0; i <= l.level; i++ {
		l.op(isa.OpModAdd, i, 0, d[0][i], k0[i], d[0][i])
		l.op(isa.OpModAdd, i, 0, d[1][i], k1[i], d[1][i])
	}
	l.release(k0...)
	l.release(k1...)
	l.release(d[2]...)
	return d[:2]
}

// automorphism follows Lattigo's order: key-switch c1, add c0, then permute.
func (l *lowering) automorphism(a []poly, gal uint64) []poly {
	k0, k1 := l.keySwitch(a[1])
	g := l.galois(gal)
	out := []poly{make(poly, l.level+1), make(poly, l.level+1)}
	for i := 0; i <= l.level; i++ {
		l.op(isa.OpModAdd, i, 0, k0[i], a[0][i], k0[i])
		out[0][i], out[1][i] = l.alloc(), l.alloc()
		l.op(isa.OpAutomorph, i, 0, k0[i], g, out[0][i])
		l.op(isa.OpAutomorph, i, 0, k1[i], g, out[1][i])
	}
	return out
}

func (l *lowering) keyObj(role string) Object {
	return Object{Role: role, Space: isa.SpaceNAND, ID: objKey, Polys: 2 * l.digits(l.ctx.Ring.MaxLevel()), Limbs: l.nQ + l.nP}
}

// digits returns the number of key-switching digits at a level.
func (l *lowering) digits(level int) int { return (level + l.nP) / l.nP }

func (l *lowering) pIdx(k int) int { return l.nQ + k }

// halfMod returns ⌊M/2⌋ mod q for M the product of the given moduli.
func halfMod(moduli []uint64, q uint64) uint64 {
	m := big.NewInt(1)
	for _, x := range moduli {
		m.Mul(m, new(big.Int).SetUint64(x))
	}
	m.Rsh(m, 1)
	return m.Mod(m, new(big.Int).SetUint64(q)).Uint64()
}

func invMod(x, q uint64) uint64 {
	return new(big.Int).ModInverse(new(big.Int).SetUint64(x%q), new(big.Int).SetUint64(q)).Uint64()
}

// modRaise lifts a level-0 ciphertext to q_0…q_target by the centered
// representative of each coefficient (bootstrapping's ModRaise): INTT,
// centered lift into the new primes, NTT. Limb 0 is unchanged.
func (l *lowering) modRaise(a []poly, target int) []poly {
	to := make([]uint8, target)
	for i := range to {
		to[i] = uint8(i + 1)
	}
	out := make([]poly, len(a))
	for p := range a {
		x := l.alloc()
		l.intt(0, a[p][0], x)
		y := l.allocRun(target)
		l.emit(isa.Instr{Op: isa.OpBConv, Flags: isa.FlagCenter, A: x, B: l.basis([]uint8{0}, to), Out: y[0]})
		for i, s := range y {
			l.ntt(i+1, s, s)
		}
		l.release(x)
		out[p] = append(poly{a[p][0]}, y...)
	}
	return out
}
