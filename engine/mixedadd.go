package engine

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// isMixedAdd reports whether an HAdd/HSub instance has an operand that is
// not a degree-1 ciphertext (lower.OpAddMixed).
func isMixedAdd(n ir.Node, a, b *Value) bool {
	return (n.Op == ir.OpHAdd || n.Op == ir.OpHSub) && (a.degree() != 1 || b.degree() != 1)
}

// deviceMixedAdd runs an addition of ciphertexts of different degrees.
func (x *Executor) deviceMixedAdd(ctx context.Context, n ir.Node, a, b *Value) (Value, error) {
	level := a.level()
	if b.level() != level || a.degree() < 1 || b.degree() < 1 {
		return Value{}, fmt.Errorf("mixed addition of level %d degree %d and level %d degree %d", level, a.degree(), b.level(), b.degree())
	}
	lc := &lower.Context{Scheme: x.Preset.Scheme, Ring: lower.RingOf(x.Params), T: x.Preset.T, Level: level}
	l, err := lower.AddMixed(lc, n.Op == ir.OpHSub, a.degree()+1, b.degree()+1)
	if err != nil {
		return Value{}, err
	}
	inputs := make([]Operand, 2)
	for i, v := range []*Value{a, b} {
		if inputs[i], err = x.operand(ctx, v, l.Inputs[i]); err != nil {
			return Value{}, fmt.Errorf("operand %d: %w", i, err)
		}
	}
	return x.runLowered(ctx, l, inputs, Operand{}, resultMeta(n.Op, a.meta(), b.meta(), rlwe.NewScale(1), 0, nil))
}
