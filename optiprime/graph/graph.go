package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// Kind is an operation type.
type Kind uint8

// Operation kinds.
const (
	Conv Kind = iota + 1
	Trunc
	ReLU
	MaxPool
	AvgPool
	Add
)

func (k Kind) String() string {
	switch k {
	case Conv:
		return "conv"
	case Trunc:
		return "trunc"
	case ReLU:
		return "relu"
	case MaxPool:
		return "maxpool"
	case AvgPool:
		return "avgpool"
	case Add:
		return "add"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Dims is a CHW tensor shape.
type Dims struct{ C, H, W int }

// Len is the number of entries.
func (d Dims) Len() int { return d.C * d.H * d.W }

// Op is one operation. In lists its operands (value indices); Out is its
// output shape.
type Op struct {
	Kind   Kind
	Name   string
	In     []int
	Out    Dims
	Shape  linear.ConvShape // Conv
	Shift  int              // Trunc, AvgPool: divide by 2^Shift; Conv: scale of its weights
	K      int              // MaxPool window (K×K)
	Stride int              // MaxPool stride
	Pad    int              // MaxPool zero padding
	Mul    int64            // AvgPool: round(2^Shift / (H·W))
	W      []int64          // Conv: OIHW weights, |w| ≤ 2^(WeightBits−1) − 1 (server only)
	B      []int64          // Conv: bias per output channel at scale ActScale+Shift (server only)
}

// Net is a fixed-point network.
type Net struct {
	Name       string
	LogT       int // ℓ: shares mod 2^ℓ
	ActScale   int
	WeightBits int
	Input      Dims
	Ops        []Op
}

// dims returns the shape of value v.
func (n *Net) dims(v int) Dims {
	if v == 0 {
		return n.Input
	}
	return n.Ops[v-1].Out
}

// Output is the index of the network's output value.
func (n *Net) Output() int { return len(n.Ops) }

// Validate checks that every operation's operands exist, precede it and
// have the shapes it needs, and that weights (if present) respect their
// bounds.
func (n *Net) Validate() error {
	if n.LogT < 8 || n.LogT > 44 || n.WeightBits < 2 || n.WeightBits > 16 || n.ActScale < 0 || n.ActScale >= n.LogT {
		return fmt.Errorf("graph: %s: bad ℓ=%d, weight bits %d, scale %d", n.Name, n.LogT, n.WeightBits, n.ActScale)
	}
	if n.Input.Len() <= 0 || len(n.Ops) == 0 {
		return fmt.Errorf("graph: %s: empty network", n.Name)
	}
	for i, op := range n.Ops {
		arity := 1
		if op.Kind == Add {
			arity = 2
		}
		if len(op.In) != arity {
			return fmt.Errorf("graph: %s op %d (%s): %d operands, want %d", n.Name, i, op.Name, len(op.In), arity)
		}
		for _, v := range op.In {
			if v < 0 || v > i {
				return fmt.Errorf("graph: %s op %d (%s): operand %d is not an earlier value", n.Name, i, op.Name, v)
			}
		}
		in := n.dims(op.In[0])
		var want Dims
		switch op.Kind {
		case Conv:
			s := op.Shape
			if err := s.Validate(); err != nil {
				return fmt.Errorf("graph: %s op %d (%s): %w", n.Name, i, op.Name, err)
			}
			if s.InputLen() != in.Len() || (s.H != 1 || s.W != 1) && (s.Ci != in.C || s.H != in.H || s.W != in.W) {
				return fmt.Errorf("graph: %s op %d (%s): shape %+v does not take %+v", n.Name, i, op.Name, s, in)
			}
			want = Dims{s.Co, s.OutH(), s.OutW()}
			if op.W != nil && (len(op.W) != s.WeightLen() || len(op.B) != s.Co) {
				return fmt.Errorf("graph: %s op %d (%s): %d weights and %d biases, want %d and %d", n.Name, i, op.Name, len(op.W), len(op.B), s.WeightLen(), s.Co)
			}
			wmax := int64(1)<<(n.WeightBits-1) - 1
			for j, w := range op.W {
				if w < -wmax || w > wmax {
					return fmt.Errorf("graph: %s op %d (%s): weight %d = %d exceeds ±%d", n.Name, i, op.Name, j, w, wmax)
				}
			}
		case Trunc, ReLU:
			if op.Kind == Trunc && (op.Shift < 1 || op.Shift >= n.LogT) {
				return fmt.Errorf("graph: %s op %d (%s): shift %d", n.Name, i, op.Name, op.Shift)
			}
			want = in
		case MaxPool:
			if op.K < 1 || op.Stride < 1 || op.Pad < 0 || op.Pad >= op.K || in.H+2*op.Pad < op.K || in.W+2*op.Pad < op.K {
				return fmt.Errorf("graph: %s op %d (%s): bad pool %d/%d/%d on %+v", n.Name, i, op.Name, op.K, op.Stride, op.Pad, in)
			}
			want = Dims{in.C, (in.H+2*op.Pad-op.K)/op.Stride + 1, (in.W+2*op.Pad-op.K)/op.Stride + 1}
		case AvgPool:
			if op.Shift < 1 || op.Shift >= n.LogT || op.Mul < 1 || op.Mul >= int64(1)<<op.Shift {
				return fmt.Errorf("graph: %s op %d (%s): bad average (mul %d, shift %d)", n.Name, i, op.Name, op.Mul, op.Shift)
			}
			want = Dims{in.C, 1, 1}
		case Add:
			if n.dims(op.In[1]) != in {
				return fmt.Errorf("graph: %s op %d (%s): adds %+v and %+v", n.Name, i, op.Name, in, n.dims(op.In[1]))
			}
			want = in
		default:
			return fmt.Errorf("graph: %s op %d: unknown kind %d", n.Name, i, op.Kind)
		}
		if op.Out != want {
			return fmt.Errorf("graph: %s op %d (%s): output %+v, want %+v", n.Name, i, op.Name, op.Out, want)
		}
	}
	return nil
}

// Public returns the network without weights and biases (what the client
// knows: the architecture).
func (n *Net) Public() *Net {
	p := *n
	p.Ops = make([]Op, len(n.Ops))
	for i, op := range n.Ops {
		op.W, op.B = nil, nil
		op.In = append([]int(nil), op.In...)
		p.Ops[i] = op
	}
	return &p
}

// Digest is a SHA-256 of the public architecture: the two parties compare
// digests to agree on the network.
func (n *Net) Digest() [32]byte {
	h := sha256.New()
	put := func(v ...int) {
		for _, x := range v {
			_ = binary.Write(h, binary.LittleEndian, int64(x))
		}
	}
	h.Write([]byte(n.Name))
	put(n.LogT, n.ActScale, n.WeightBits, n.Input.C, n.Input.H, n.Input.W, len(n.Ops))
	for _, op := range n.Ops {
		s := op.Shape
		put(int(op.Kind), len(op.In))
		put(op.In...)
		put(op.Out.C, op.Out.H, op.Out.W, s.Ci, s.H, s.W, s.Co, s.Kh, s.Kw, s.Stride, s.Pad, s.Groups, op.Shift, op.K, op.Stride, op.Pad, int(op.Mul))
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// Windows returns, for a K×K max-pool with stride and zero padding on a
// CHW tensor of shape in, the input index of every window entry (window
// major, K² entries each, −1 for padding), and the output shape.
func Windows(in Dims, k, stride, pad int) ([]int, Dims) {
	out := Dims{in.C, (in.H+2*pad-k)/stride + 1, (in.W+2*pad-k)/stride + 1}
	idx := make([]int, 0, out.Len()*k*k)
	for c := 0; c < in.C; c++ {
		for y := 0; y < out.H; y++ {
			for x := 0; x < out.W; x++ {
				for ky := 0; ky < k; ky++ {
					for kx := 0; kx < k; kx++ {
						iy, ix := y*stride+ky-pad, x*stride+kx-pad
						if iy < 0 || iy >= in.H || ix < 0 || ix >= in.W {
							idx = append(idx, -1)
							continue
						}
						idx = append(idx, (c*in.H+iy)*in.W+ix)
					}
				}
			}
		}
	}
	return idx, out
}

// Stats counts a network's operations.
type Stats struct {
	Convs, ReLUs, Truncs, MaxPoolWindows, Adds int
	MACs                                       int64
}

// Count returns the network's operation counts.
func (n *Net) Count() Stats {
	var st Stats
	for _, op := range n.Ops {
		switch op.Kind {
		case Conv:
			st.Convs++
			s := op.Shape
			st.MACs += int64(s.OutputLen()) * int64(s.Ci/max(1, s.Groups)*s.Kh*s.Kw)
		case ReLU:
			st.ReLUs += op.Out.Len()
		case Trunc, AvgPool:
			st.Truncs += op.Out.Len()
		case MaxPool:
			st.MaxPoolWindows += op.Out.Len()
		case Add:
			st.Adds += op.Out.Len()
		}
	}
	return st
}
