package engine

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// This file holds the host path: a node run with Lattigo's evaluators.

func (x *Executor) runHost(p *ir.Program, n ir.Node, vals [][]Value) ([]Value, error) {
	out := make([]Value, n.Count)
	if n.Op == ir.OpSum {
		args := vals[n.Args[0]]
		k := int64(len(args)) / n.Count
		for j := int64(0); j < n.Count; j++ {
			acc := args[j*k].Ct.CopyNew()
			for t := int64(1); t < k; t++ {
				if err := x.add(acc, args[j*k+t].Ct, acc); err != nil {
					return nil, err
				}
			}
			out[j] = Value{Ct: acc}
		}
		return out, nil
	}
	for k := int64(0); k < n.Count; k++ {
		a := instance(vals[n.Args[0]], k)
		if isNamedConstant(n) {
			c, err := x.resolveConstant(p, n, &a, vals, k)
			if err != nil {
				return nil, err
			}
			ct, err := x.hostConstant(a.Ct, c)
			if err != nil {
				return nil, err
			}
			out[k] = Value{Ct: ct}
			continue
		}
		var b Value
		if len(n.Args) > 1 {
			b = instance(vals[n.Args[1]], k)
		}
		ct, err := x.hostOp(n, a, b)
		if err != nil {
			return nil, err
		}
		out[k] = Value{Ct: ct}
	}
	return out, nil
}

func (x *Executor) add(a, b, out *rlwe.Ciphertext) error {
	if x.ckEval != nil {
		return x.ckEval.Add(a, b, out)
	}
	return x.bgEval.Add(a, b, out)
}

func (x *Executor) hostOp(n ir.Node, a, b Value) (*rlwe.Ciphertext, error) {
	ck, bg := x.ckEval, x.bgEval
	isCKKS := ck != nil
	switch n.Op {
	case ir.OpHAdd:
		if isCKKS {
			return ck.AddNew(a.Ct, b.Ct)
		}
		return bg.AddNew(a.Ct, b.Ct)
	case ir.OpHSub:
		if isCKKS {
			return ck.SubNew(a.Ct, b.Ct)
		}
		return bg.SubNew(a.Ct, b.Ct)
	case ir.OpPMult:
		var op rlwe.Operand = b.Pt
		if b.Pt == nil {
			op = b.Ct
		}
		if isCKKS {
			return ck.MulNew(a.Ct, op)
		}
		return bg.MulNew(a.Ct, op)
	case ir.OpCMult:
		if isCKKS {
			return ck.MulNew(a.Ct, n.Constant)
		}
		return bg.MulNew(a.Ct, int64(n.Constant))
	case ir.OpHMult:
		if isCKKS {
			return ck.MulNew(a.Ct, b.Ct)
		}
		return bg.MulNew(a.Ct, b.Ct)
	case ir.OpRelinearize:
		if isCKKS {
			return ck.RelinearizeNew(a.Ct)
		}
		return bg.RelinearizeNew(a.Ct)
	case ir.OpHRot:
		if isCKKS {
			return ck.RotateNew(a.Ct, n.Rotation)
		}
		return bg.RotateColumnsNew(a.Ct, n.Rotation)
	case ir.OpConjugate:
		if isCKKS {
			return ck.ConjugateNew(a.Ct)
		}
		return bg.RotateRowsNew(a.Ct)
	case ir.OpRescale:
		out := rlwe.NewCiphertext(x.Params, 1, a.Ct.Level()-1)
		if isCKKS {
			return out, ck.Rescale(a.Ct, out)
		}
		return out, bg.Rescale(a.Ct, out)
	case ir.OpModRaise:
		if !isCKKS {
			return nil, fmt.Errorf("ModRaise is a step of CKKS bootstrapping")
		}
		return ModRaise(x.Params, a.Ct, n.Level)
	case ir.OpLevelDown:
		c := a.Ct.CopyNew()
		c.Resize(c.Degree(), n.Level)
		return c, nil
	}
	return nil, fmt.Errorf("no host execution for %s", n.Op)
}
