package engine

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// scaler makes the scale of a prime in the scheme's arithmetic (a real
// number for CKKS, a residue mod t for BGV).
type scaler interface{ NewScale(any) rlwe.Scale }

// resultMeta is the metadata of a result of op (as lowered: compiler.
// OpPMultCompact for a compact PMult) from its operands' metadata: scales
// multiply in products, the larger wins in additions, a rescale divides by
// the dropped prime q (the level of the operand), constScale is a CMult
// constant's scale. Expansion leaves and relinearized products keep their
// operand's.
func resultMeta(op ir.Op, a, b *rlwe.MetaData, constScale rlwe.Scale, q uint64, sc scaler) rlwe.MetaData {
	md := *a
	switch op {
	case ir.OpPMult, lower.OpPMultCompact, ir.OpHMult:
		md.Scale = a.Scale.Mul(b.Scale)
	case ir.OpCMult:
		md.Scale = a.Scale.Mul(constScale)
	case ir.OpHAdd, ir.OpHSub:
		md.Scale = a.Scale.Max(b.Scale)
	case ir.OpRescale:
		md.Scale = a.Scale.Div(sc.NewScale(q))
	}
	return md
}

// ProgramMeta returns the metadata of every node of p given the metadata
// of its Input and Stored nodes by name (all instances of a node share
// it). The stream path, which returns bare limbs, labels its results with
// it.
func ProgramMeta(p *ir.Program, params rlwe.ParameterProvider, sc scaler, sources map[string]rlwe.MetaData) ([]rlwe.MetaData, error) {
	q := params.GetRLWEParameters().Q()
	md := make([]rlwe.MetaData, len(p.Nodes))
	for i, n := range p.Nodes {
		switch n.Op {
		case ir.OpInput, ir.OpStored:
			m, ok := sources[n.Name]
			if !ok {
				return nil, fmt.Errorf("engine: no metadata for %s %q", n.Op, n.Name)
			}
			md[i] = m
			continue
		case ir.OpBoot, ir.OpCMult:
			return nil, fmt.Errorf("engine: node %d: %s metadata depends on its evaluation", i, n.Op)
		}
		a := &md[n.Args[0]]
		b := a
		if len(n.Args) > 1 {
			b = &md[n.Args[1]]
		}
		level := p.Nodes[n.Args[0]].Level
		if level >= len(q) {
			return nil, fmt.Errorf("engine: node %d at level %d beyond the parameters", i, level)
		}
		md[i] = resultMeta(lower.NodeOp(p, n), a, b, rlwe.NewScale(1), q[level], sc)
	}
	return md, nil
}
