package lower

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// BootLinearTransform names one BSGS matrix product of a bootstrapping DFT
// (compiler.ExpandBoot writes String() into the Name of the node holding its
// result). An executor may run the product as one lowered program,
// LinearTransform, instead of node by node.
type BootLinearTransform struct {
	DFT    string // "cts" or "stc"
	Matrix int
	// Slots is the number of slots the matrix acts on (twice the
	// bootstrapped slots when they are sparse).
	Slots int
	// Input is the distance from the input ciphertext's node to the
	// result's node in the expanded program.
	Input int
}

const bootLTPrefix = "bootlt/"

// String is bootlt/<dft><matrix>/slots<slots>/in<input>.
func (b BootLinearTransform) String() string {
	return fmt.Sprintf("%s%s%d/slots%d/in%d", bootLTPrefix, b.DFT, b.Matrix, b.Slots, b.Input)
}

// ParseBootLinearTransform reads a name written by BootLinearTransform.String.
func ParseBootLinearTransform(name string) (BootLinearTransform, error) {
	bad := func(why string) (BootLinearTransform, error) {
		return BootLinearTransform{}, fmt.Errorf("lower: boot linear transform %q: %s", name, why)
	}
	if !strings.HasPrefix(name, bootLTPrefix) {
		return bad("no " + bootLTPrefix + " prefix")
	}
	f := strings.Split(strings.TrimPrefix(name, bootLTPrefix), "/")
	if len(f) != 3 || len(f[0]) < 4 || (f[0][:3] != "cts" && f[0][:3] != "stc") {
		return bad("want cts<m>|stc<m>/slots<n>/in<k>")
	}
	var b BootLinearTransform
	b.DFT = f[0][:3]
	num := func(s, prefix string, lo, hi int) (int, bool) {
		if !strings.HasPrefix(s, prefix) {
			return 0, false
		}
		v, err := strconv.Atoi(s[len(prefix):])
		return v, err == nil && v >= lo && v <= hi
	}
	var ok bool
	if b.Matrix, ok = num(f[0], b.DFT, 0, 64); !ok {
		return bad("bad matrix index")
	}
	if b.Slots, ok = num(f[1], "slots", 2, 1<<17); !ok || b.Slots&(b.Slots-1) != 0 {
		return bad("slots must be a power of two in [2, 2^17]")
	}
	if b.Input, ok = num(f[2], "in", 1, 1<<30); !ok {
		return bad("bad input distance")
	}
	if b.String() != name {
		return bad("not in canonical form")
	}
	return b, nil
}

// LinearTransformProgram is a BSGS matrix product as one mProgram. Its
// inputs are the ciphertext (object 1) and the diagonals (objects 4, 5, …;
// in Diagonals order), each over q_0…q_level then p_0…p_{α−1} in
// Montgomery form (Lattigo's LinearTransformation.Vec); its keys are the
// Galois keys of Galois (NAND objects 1, 2, …).
type LinearTransformProgram struct {
	*Program
	Diagonals []int
	Galois    []uint64
}

// LinearTransform lowers Lattigo's hoisted BSGS product
// (lintrans.Evaluator.EvaluateMany → MultiplyByDiagMatrixBSGS, after
// PreRotatedCiphertextForDiagonalMatrixMultiplication) of a level-`level`
// ciphertext by the matrix with the given non-zero diagonals over `slots`
// slots, operation for operation: c1 decomposed once; each baby rotation
// a gadget product with its key left over QP, P·c0 added, the automorphism
// applied over QP; per giant step the diagonals multiplied over QP and
// summed, the c1 part brought down to Q and key-switched (again left over
// QP) with the giant step's key, the c0 part added, the automorphism
// applied; one ModDown of the sums at the end. The split is Lattigo's
// (LogBabyStepGiantStepRatio 1).
func LinearTransform(r Ring, level, slots int, diags []int) (*LinearTransformProgram, error) {
	if len(diags) == 0 {
		return nil, fmt.Errorf("lower: linear transform without diagonals")
	}
	l, err := newLowering(&Context{Scheme: fhe.CKKS, Ring: r, Level: level})
	if err != nil {
		return nil, err
	}
	n1 := BestBSGSRatio(diags, slots, 1)
	index, giant, baby := BSGSIndex(diags, slots, n1)
	res := &LinearTransformProgram{Program: &Program{Op: "LinearTransform"}}
	keyOf := map[int]int{} // rotation → NAND object
	key := func(rot int) int {
		if id, ok := keyOf[rot]; ok {
			return id
		}
		res.Galois = append(res.Galois, r.GaloisElement(rot))
		keyOf[rot] = len(res.Galois)
		res.Keys = append(res.Keys, Object{Role: "gk", Space: isa.SpaceNAND, ID: len(res.Galois), Polys: 2 * l.digits(r.MaxLevel()), Limbs: l.nQ + l.nP})
		return keyOf[rot]
	}
	diagObj := map[int]int{} // diagonal → DRAM object
	qp := level + 1 + l.nP
	loadDiag := func(d int) []isa.Addr {
		id, ok := diagObj[d]
		if !ok {
			res.Diagonals = append(res.Diagonals, d)
			id = objOut + len(res.Diagonals)
			diagObj[d] = id
			res.Inputs = append(res.Inputs, Object{Role: "diag", Space: isa.SpaceDRAM, ID: id, Polys: 1, Limbs: qp})
		}
		out := make([]isa.Addr, qp)
		for k := range out {
			out[k] = l.alloc()
			l.emit(isa.Instr{Op: isa.OpLD, Mod: uint8(l.qpMod(k)), A: isa.Obj(isa.SpaceDRAM, id, k), Out: out[k]})
		}
		return out
	}
	res.Inputs = []Object{l.ctObj("ct0", objIn0, 2)}
	a := l.loadCt(objIn0, 2)

	// P·c0 and P·c1 over Q (MulScalarBigint by P).
	pMod := make([]uint64, level+1)
	for i := range pMod {
		P := big.NewInt(1)
		for _, p := range r.P {
			P.Mul(P, new(big.Int).SetUint64(p))
		}
		pMod[i] = P.Mod(P, new(big.Int).SetUint64(r.Q[i])).Uint64()
	}
	pc := [2]poly{make(poly, level+1), make(poly, level+1)}
	for p := range pc {
		for i := range pc[p] {
			pc[p][i] = l.alloc()
			l.op(isa.OpModMul, i, isa.FlagScalarB|isa.FlagPlain, a[p][i], l.scalar(pMod[i]), pc[p][i])
		}
	}

	// Hoisted decomposition of c1.
	cInv := l.allocRun(level + 1)
	for i := range cInv {
		l.intt(i, a[1][i], cInv[i])
	}
	digits := make([][]isa.Addr, l.digits(level))
	var exts []isa.Addr
	for d := range digits {
		var ext []isa.Addr
		digits[d], ext = l.digitQP(a[1], cInv, d)
		exts = append(exts, ext...)
	}
	l.release(cInv...)

	// Baby rotations, left over QP: (φ(d0 + P·c0), φ(d1)).
	rotated := map[int][2][]isa.Addr{}
	for _, i := range baby {
		if i == 0 {
			continue
		}
		k := key(i)
		accQ, accP := l.newAccQP()
		for d := range digits {
			l.macKey(digits[d], d, k, accQ, accP)
		}
		for j := 0; j <= level; j++ {
			l.op(isa.OpModAdd, j, 0, accQ[0][j], pc[0][j], accQ[0][j])
		}
		g := l.galois(r.GaloisElement(i))
		var rot [2][]isa.Addr
		for comp := 0; comp < 2; comp++ {
			src := append(append([]isa.Addr(nil), accQ[comp]...), accP[comp]...)
			rot[comp] = make([]isa.Addr, qp)
			for t, s := range src {
				rot[comp][t] = l.alloc()
				l.op(isa.OpAutomorph, l.qpMod(t), 0, s, g, rot[comp][t])
			}
			l.release(src...)
		}
		rotated[i] = rot
	}
	l.release(exts...)

	// Giant steps.
	var out [2][]isa.Addr // QP accumulators of the result (nil: none yet)
	accumulate := func(dst *[]isa.Addr, src []isa.Addr) {
		if *dst == nil {
			*dst = src
			return
		}
		for t := range src {
			l.op(isa.OpModAdd, l.qpMod(t), 0, (*dst)[t], src[t], (*dst)[t])
		}
		l.release(src...)
	}
	for _, j := range giant {
		// tmp[comp]: QP limbs; P limbs stay zero (nil) while only the
		// unrotated term (which has no P part) contributed.
		var tmp [2][]isa.Addr
		var have [2][]bool
		for comp := range tmp {
			tmp[comp], have[comp] = make([]isa.Addr, qp), make([]bool, qp)
		}
		for _, i := range index[j] {
			pt := loadDiag((j + i) & (slots - 1))
			for comp := 0; comp < 2; comp++ {
				terms := qp
				var src []isa.Addr
				if i == 0 {
					terms, src = level+1, pc[comp]
				} else {
					src = rotated[i][comp]
				}
				for t := 0; t < terms; t++ {
					if !have[comp][t] {
						have[comp][t] = true
						tmp[comp][t] = l.alloc()
						l.op(isa.OpModMul, l.qpMod(t), 0, pt[t], src[t], tmp[comp][t])
					} else {
						l.op(isa.OpModMAC, l.qpMod(t), 0, pt[t], src[t], tmp[comp][t])
					}
				}
			}
			l.release(pt...)
		}
		for comp := 0; comp < 2; comp++ {
			for t := range tmp[comp] {
				if !have[comp][t] { // a P limb no rotated term reached: zero
					tmp[comp][t] = l.alloc()
					l.op(isa.OpModMul, l.qpMod(t), isa.FlagScalarB|isa.FlagPlain, pc[0][0], l.scalar(0), tmp[comp][t])
				}
			}
		}
		if j == 0 {
			accumulate(&out[0], tmp[0])
			accumulate(&out[1], tmp[1])
			continue
		}
		// c1 part: ModDown to Q, then the giant step's key, left over QP.
		c1 := poly(tmp[1][:level+1])
		l.modDown(c1, poly(tmp[1][level+1:]))
		accQ, accP := l.gadgetProduct(c1, key(j))
		l.release(c1...)
		for t := 0; t < qp; t++ {
			dst := l.qpAt(accQ[0], accP[0], t)
			l.op(isa.OpModAdd, l.qpMod(t), 0, dst, tmp[0][t], dst)
		}
		l.release(tmp[0]...)
		g := l.galois(r.GaloisElement(j))
		for comp := 0; comp < 2; comp++ {
			src := append(append([]isa.Addr(nil), accQ[comp]...), accP[comp]...)
			rot := make([]isa.Addr, qp)
			for t, s := range src {
				rot[t] = l.alloc()
				l.op(isa.OpAutomorph, l.qpMod(t), 0, s, g, rot[t])
			}
			l.release(src...)
			accumulate(&out[comp], rot)
		}
	}
	for _, rot := range rotated {
		l.release(rot[0]...)
		l.release(rot[1]...)
	}
	l.release(pc[0]...)
	l.release(pc[1]...)
	final := make([]poly, 2)
	for comp := 0; comp < 2; comp++ {
		final[comp] = poly(out[comp][:level+1])
		l.modDown(final[comp], poly(out[comp][level+1:]))
	}
	l.storeCt(final)
	res.Output = l.ctObj("out", objOut, 2)
	if res.Program.Program, err = l.program(); err != nil {
		return nil, err
	}
	return res, nil
}

// qpMod is the modulus index of limb t of a QP polynomial at the current
// level: q_t, then the special primes.
func (l *lowering) qpMod(t int) int {
	if t <= l.level {
		return t
	}
	return l.pIdx(t - l.level - 1)
}

// qpAt is limb t of the QP polynomial (q, p).
func (l *lowering) qpAt(q, p poly, t int) isa.Addr {
	if t <= l.level {
		return q[t]
	}
	return p[t-l.level-1]
}
