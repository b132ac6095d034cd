package graph

import (
	"errors"
	"fmt"
)

// Reference runs the network on the fixed-point input x (at ActScale) in
// int64 arithmetic, as the protocol computes mod 2^ℓ, and returns the
// output value. It fails if any value reaches 2^(ℓ−2) in magnitude (the
// protocols' range: comparisons take differences of two values).
func (n *Net) Reference(x []int64) ([]int64, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(x) != n.Input.Len() {
		return nil, fmt.Errorf("graph: input has %d entries, want %d", len(x), n.Input.Len())
	}
	limit := int64(1) << (n.LogT - 2)
	vals := make([][]int64, len(n.Ops)+1)
	vals[0] = x
	for i, op := range n.Ops {
		in := vals[op.In[0]]
		out := make([]int64, op.Out.Len())
		switch op.Kind {
		case Conv:
			if op.W == nil {
				return nil, errors.New("graph: reference needs the weights")
			}
			convolve(op.Shape, op.W, op.B, in, out)
		case Trunc:
			for j, v := range in {
				out[j] = v >> uint(op.Shift) // arithmetic shift: floor
			}
		case ReLU:
			for j, v := range in {
				out[j] = max(v, 0)
			}
		case MaxPool:
			idx, _ := Windows(n.dims(op.In[0]), op.K, op.Stride, op.Pad)
			maxPool(idx, op.K*op.K, in, out)
		case AvgPool:
			d := n.dims(op.In[0])
			plane := d.H * d.W
			for c := range out {
				var s int64
				for _, v := range in[c*plane : (c+1)*plane] {
					s += v
				}
				if s >= limit || s <= -limit || s*op.Mul >= limit || s*op.Mul <= -limit {
					return nil, fmt.Errorf("graph: %s: %s sum %d leaves the %d-bit range", n.Name, op.Name, s, n.LogT)
				}
				out[c] = (s * op.Mul) >> uint(op.Shift)
			}
		case Add:
			b := vals[op.In[1]]
			for j := range out {
				out[j] = in[j] + b[j]
			}
		}
		for j, v := range out {
			if v >= limit || v <= -limit {
				return nil, fmt.Errorf("graph: %s: %s output %d = %d reaches 2^%d (ℓ = %d too small)", n.Name, op.Name, j, v, n.LogT-2, n.LogT)
			}
		}
		vals[i+1] = out
		for v := range vals[:i+1] {
			if vals[v] != nil && !readLater(n, v, i) {
				vals[v] = nil
			}
		}
	}
	return vals[len(n.Ops)], nil
}
