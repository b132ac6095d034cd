package compiler

import (
	"fmt"
	"math/big"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/isa"
)

// MACLowered is a Sum over compact-plaintext products (Sum(PMult(ct, pt))
// with pt stored compact) as one multiply-accumulate loop: three programs
// sharing one configuration and the accumulator's SRAM slots, which stay
// on chip between runs. First sets acc = ct·pt, Next adds ct·pt to it, and
// Flush stores it — CLCAO's streaming placement: a product is never
// written out, it streams into the accumulator. Inputs are the ct and the
// compact pt objects of every step; Output is written by Flush.
type MACLowered struct {
	First, Next, Flush *isa.Program
	Inputs             []Object
	Output             Object
}

// LowerMACCompact lowers the multiply-accumulate of BGV ciphertexts at
// ctx.Level by compact plaintexts. Each step reads the ciphertext and the
// plaintext in place (loads view the objects), lifts the plaintext out of
// place and multiplies into the accumulator: no copy of an operand.
func LowerMACCompact(ctx *LowerContext) (*MACLowered, error) {
	if ctx.Scheme != fhe.BGV {
		return nil, fmt.Errorf("compiler: compact plaintexts are BGV plaintexts, not %s", ctx.Scheme)
	}
	l, err := newLowering(ctx)
	if err != nil {
		return nil, err
	}
	acc := []poly{make(poly, l.level+1), make(poly, l.level+1)}
	for p := range acc {
		for i := range acc[p] {
			acc[p][i] = l.alloc()
		}
	}
	step := func(op isa.Opcode) {
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
	step(isa.OpModMul)
	first := len(l.code)
	step(isa.OpModMAC)
	next := len(l.code)
	l.storeCt(acc)
	whole, err := l.program()
	if err != nil {
		return nil, err
	}
	part := func(code []isa.Instr) (*isa.Program, error) {
		p := &isa.Program{Config: whole.Config, Code: append([]isa.Instr(nil), code...)}
		return p, p.Validate()
	}
	m := &MACLowered{Inputs: []Object{l.ctObj("ct0", objIn0, 2), {Role: "pt", Space: isa.SpaceDRAM, ID: objIn1, Polys: 1, Limbs: 1}},
		Output: l.ctObj("out", objOut, 2)}
	if m.First, err = part(whole.Code[:first]); err == nil {
		if m.Next, err = part(whole.Code[first:next]); err == nil {
			m.Flush, err = part(whole.Code[next:])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("compiler: multiply-accumulate: %w", err)
	}
	return m, nil
}

// montR2 is 2^128 mod q: a Montgomery product by it puts a value in
// Montgomery form.
func montR2(q uint64) uint64 {
	r := new(big.Int).Lsh(big.NewInt(1), 128)
	return r.Mod(r, new(big.Int).SetUint64(q)).Uint64()
}
