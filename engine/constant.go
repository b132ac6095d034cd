package engine

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// ConstantProvider resolves named constants: a CMult node whose Name is
// set (the bootstrapping constants compiler.ExpandBoot emits,
// lower.BootConst) multiplies by, and may add, values that depend on the
// parameters and on its operand. in is the operand's metadata at the level
// the node runs; partner, when the node's only reader is an addition or
// subtraction whose other operand comes earlier, is that operand's
// metadata (nil otherwise).
type ConstantProvider interface {
	Constant(name string, level int, in rlwe.MetaData, partner *rlwe.MetaData) (lower.Constant, error)
}

// isNamedConstant reports whether n is a CMult by a named constant.
func isNamedConstant(n ir.Node) bool { return n.Op == ir.OpCMult && n.Name != "" }

// resolveConstant resolves instance k of the named constant node n whose
// operand is a.
func (x *Executor) resolveConstant(p *ir.Program, n ir.Node, a *Value, vals [][]Value, k int64) (lower.Constant, error) {
	if x.Constants == nil {
		return lower.Constant{}, fmt.Errorf("constant %q needs a ConstantProvider", n.Name)
	}
	if x.users == nil || x.usersOf != p {
		x.users, x.usersOf = p.Users(), p
	}
	var partner *rlwe.MetaData
	if us := x.users[n.ID]; len(us) == 1 {
		u := p.Nodes[us[0]]
		if (u.Op == ir.OpHAdd || u.Op == ir.OpHSub) && len(u.Args) == 2 {
			other := u.Args[0]
			if other == n.ID {
				other = u.Args[1]
			}
			if other < n.ID && len(vals[other]) > 0 {
				partner = instanceRef(vals[other], k).meta()
			}
		}
	}
	c, err := x.Constants.Constant(n.Name, a.level(), *a.meta(), partner)
	if err != nil {
		return c, fmt.Errorf("constant %q: %w", n.Name, err)
	}
	return c, nil
}

// hostConstant applies a resolved constant to a host ciphertext with
// Lattigo's modular arithmetic (the same residues the device multiplies by).
func (x *Executor) hostConstant(ct *rlwe.Ciphertext, c lower.Constant) (*rlwe.Ciphertext, error) {
	out := ct.CopyNew()
	level := out.Level()
	rq := x.Params.RingQ().AtLevel(level)
	if len(c.Mul[0]) != level+1 || len(c.Mul[1]) != level+1 || (c.Add[0] != nil && (len(c.Add[0]) != level+1 || len(c.Add[1]) != level+1)) {
		return nil, fmt.Errorf("constant has %d residues, the ciphertext %d limbs", len(c.Mul[0]), level+1)
	}
	half := x.Params.N() / 2
	for p, poly := range out.Value {
		for i, s := range rq.SubRings[:level+1] {
			q, brc := s.Modulus, s.BRedConstant
			for j, v := range poly.Coeffs[i] {
				h := j / half
				v = ring.BRed(v, c.Mul[h][i], q, brc)
				if p == 0 && c.Add[0] != nil {
					v = ring.CRed(v+c.Add[h][i], q)
				}
				poly.Coeffs[i][j] = v
			}
		}
	}
	out.Scale = c.Scale
	return out, nil
}

// deviceConstant runs a resolved constant as its lowered mProgram.
func (x *Executor) deviceConstant(ctx context.Context, a *Value, c lower.Constant) (Value, error) {
	level := a.level()
	l, err := lower.ConstantOp(lower.RingOf(x.Params), level, c)
	if err != nil {
		return Value{}, err
	}
	in, err := x.operand(ctx, a, l.Inputs[0])
	if err != nil {
		return Value{}, fmt.Errorf("operand 0: %w", err)
	}
	inputs := []Operand{in}
	if c.NeedsVector() {
		vec := Operand{Limbs: c.MulVector(x.Params.LogN())}
		if x.res != nil {
			ref, err := x.res.Upload(ctx, vec.Limbs, 1)
			if err != nil {
				return Value{}, fmt.Errorf("upload: %w", err)
			}
			x.temps = append(x.temps, ref)
			vec = Operand{Ref: ref}
		}
		inputs = append(inputs, vec)
	}
	md := *a.meta()
	md.Scale = c.Scale
	return x.runLowered(ctx, l, inputs, Operand{}, md)
}
