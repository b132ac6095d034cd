package lower

import (
	"fmt"
	"math/big"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// MACLanes is the number of sums a multiply-accumulate loop folds at once
// (CLCAO's tiling of a scan): a ciphertext operand shared by the products
// of neighbouring sums (a column selection of PIR) is read once for all of
// them while it is on chip, instead of once per sum.
const MACLanes = 8

// MACProgram is a Sum over compact-plaintext products (Sum(PMult(ct, pt))
// with pt stored compact) as a multiply-accumulate loop: programs sharing
// one configuration and Lanes accumulators whose SRAM slots stay on chip
// between runs. First[j] sets accumulator j to ct·pt, Next[j] adds ct·pt
// to it and Flush[j] stores it — CLCAO's streaming placement: a product is
// never written out, it streams into its accumulator. Inputs are the ct
// and the compact pt objects of every step; Output is what Flush writes.
type MACProgram struct {
	Lanes              int
	First, Next, Flush []*isa.Program
	Inputs             []Object
	Output             Object
}

// MACCompact lowers the multiply-accumulate of BGV ciphertexts at
// ctx.Level by compact plaintexts, with lanes accumulators. Each step
// reads the ciphertext and the plaintext in place (loads view the
// objects), lifts the plaintext out of place, puts it in Montgomery form
// once and multiply-accumulates: no copy of an operand.
func MACCompact(ctx *Context, lanes int) (*MACProgram, error) {
	if ctx.Scheme != fhe.BGV {
		return nil, fmt.Errorf("lower: compact plaintexts are BGV plaintexts, not %s", ctx.Scheme)
	}
	if lanes < 1 || lanes > 64 {
		return nil, fmt.Errorf("lower: multiply-accumulate of %d lanes", lanes)
	}
	l, err := newLowering(ctx)
	if err != nil {
		return nil, err
	}
	accs := make([][]poly, lanes)
	for j := range accs {
		accs[j] = []poly{make(poly, l.level+1), make(poly, l.level+1)}
		for p := range accs[j] {
			for i := range accs[j][p] {
				accs[j][p][i] = l.alloc()
			}
		}
	}
	step := func(op isa.Opcode, acc []poly) {
		ct := l.loadCt(objIn0, 2)
		x := l.alloc()
		l.emit(isa.Instr{Op: isa.OpLD, Mod: 0, A: isa.Obj(isa.SpaceDRAM, objIn1, 0), Out: x})
		pt := make(poly, l.level+1)
		for i := range pt {
			pt[i] = l.alloc()
			if i > 0 {
				// m < t < q_i: the residues mod q_i are the stored values.
				l.op(isa.OpModAdd, i, isa.FlagScalarB, x, l.scalar(0), pt[i])
			}
		}
		l.ntt(0, x, pt[0])
		for i := 1; i < len(pt); i++ {
			l.ntt(i, pt[i], pt[i])
		}
		// To Montgomery form once (pt·R, a Montgomery product by R²), so
		// that the two products with it are Montgomery multiply-accumulates
		// (ct·pt·R·R⁻¹) rather than plain products and separate additions.
		for i := range pt {
			l.op(isa.OpModMul, i, isa.FlagScalarB, pt[i], l.scalar(montR2(l.cfg.Moduli[i])), pt[i])
		}
		for p := range ct {
			for i := range ct[p] {
				l.op(op, i, 0, ct[p][i], pt[i], acc[p][i])
			}
			l.release(ct[p]...)
		}
		l.release(pt...)
		l.release(x)
	}
	var cuts []int // code ranges: First[j], Next[j], Flush[j] for each j
	for j := range accs {
		step(isa.OpModMul, accs[j])
		cuts = append(cuts, len(l.code))
		step(isa.OpModMAC, accs[j])
		cuts = append(cuts, len(l.code))
		l.storeCt(accs[j])
		cuts = append(cuts, len(l.code))
	}
	whole, err := l.program()
	if err != nil {
		return nil, err
	}
	m := &MACProgram{Lanes: lanes, Inputs: []Object{l.ctObj("ct0", objIn0, 2), {Role: "pt", Space: isa.SpaceDRAM, ID: objIn1, Polys: 1, Limbs: 1}},
		Output: l.ctObj("out", objOut, 2)}
	from := 0
	for k, to := range cuts {
		p := &isa.Program{Config: whole.Config, Code: append([]isa.Instr(nil), whole.Code[from:to]...)}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("lower: multiply-accumulate: %w", err)
		}
		switch k % 3 {
		case 0:
			m.First = append(m.First, p)
		case 1:
			m.Next = append(m.Next, p)
		default:
			m.Flush = append(m.Flush, p)
		}
		from = to
	}
	return m, nil
}

// montR2 is 2^128 mod q: a Montgomery product by it puts a value in
// Montgomery form.
func montR2(q uint64) uint64 {
	r := new(big.Int).Lsh(big.NewInt(1), 128)
	return r.Mod(r, new(big.Int).SetUint64(q)).Uint64()
}

// lweScan lowers one instance of ir.OpLWEScan: N columns of the scan D·q
// into the accumulator. Input object 1 is the query limb (N words), input
// object 2 the matrix block (N/4 limbs, limb g holding columns 4g…4g+3 of
// the N rows, row r's four bytes in word r), the output object the
// accumulator, read and written back: instances add up. Each block limb is
// one LWEMAC against words 4g…4g+3 of the query.
func (l *lowering) lweScan() (inputs []Object, out Object, err error) {
	n := l.cfg.N()
	groups := n / 4
	if groups > isa.MaxLWEGroups {
		return nil, Object{}, fmt.Errorf("lower: an LWE scan block of %d columns has more than the %d word groups LWEMAC names", n, isa.MaxLWEGroups)
	}
	if groups > 1<<isa.LimbBits {
		return nil, Object{}, fmt.Errorf("lower: %d limbs per matrix block exceed an object address", groups)
	}
	q, acc, d := l.alloc(), l.alloc(), l.alloc()
	l.emit(isa.Instr{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, objIn0, 0), Out: q})
	l.emit(isa.Instr{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, objOut, 0), Out: acc})
	for g := 0; g < groups; g++ {
		l.emit(isa.Instr{Op: isa.OpLD, A: isa.Obj(isa.SpaceDRAM, objIn1, g), Out: d})
		l.emit(isa.Instr{Op: isa.OpLWEMAC, A: d, B: isa.Words(q.Space(), q.Index(), g), Out: acc})
	}
	l.emit(isa.Instr{Op: isa.OpST, A: acc, Out: isa.Obj(isa.SpaceDRAM, objOut, 0)})
	inputs = []Object{{Role: "query", Space: isa.SpaceDRAM, ID: objIn0, Polys: 1, Limbs: 1},
		{Role: "matrix", Space: isa.SpaceDRAM, ID: objIn1, Polys: 1, Limbs: groups}}
	return inputs, Object{Role: "out", Space: isa.SpaceDRAM, ID: objOut, Polys: 1, Limbs: 1}, nil
}
