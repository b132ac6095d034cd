package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Spec is a residual network's architecture.
type Spec struct {
	Name                              string
	Input                             Dims
	StemC, StemK, StemStride, StemPad int
	Bottleneck                        bool  // 1×1, 3×3 (stride), 1×1 ×4 blocks (ResNet-50 v1.5); else two 3×3
	Blocks                            []int // blocks per stage
	Widths                            []int // per stage (bottleneck: inner width, output 4×)
	Classes                           int
}

// The networks. ResNet-18 and ResNet-50 are torchvision's at 224×224 (the
// same convolutions as package nets counts); the mini networks keep every
// layer type at 32×32 with a few channels, for tests.
var (
	ResNet18 = Spec{Name: "resnet18", Input: Dims{3, 224, 224}, StemC: 64, StemK: 7, StemStride: 2, StemPad: 3,
		Blocks: []int{2, 2, 2, 2}, Widths: []int{64, 128, 256, 512}, Classes: 1000}
	ResNet50 = Spec{Name: "resnet50", Input: Dims{3, 224, 224}, StemC: 64, StemK: 7, StemStride: 2, StemPad: 3,
		Bottleneck: true, Blocks: []int{3, 4, 6, 3}, Widths: []int{64, 128, 256, 512}, Classes: 1000}
	Mini = Spec{Name: "resnet-mini", Input: Dims{3, 32, 32}, StemC: 4, StemK: 3, StemStride: 1, StemPad: 1,
		Blocks: []int{1, 1}, Widths: []int{4, 8}, Classes: 10}
	MiniBottleneck = Spec{Name: "resnet-mini-bottleneck", Input: Dims{3, 32, 32}, StemC: 4, StemK: 3, StemStride: 1, StemPad: 1,
		Bottleneck: true, Blocks: []int{1, 1}, Widths: []int{2, 4}, Classes: 10}
)

// Specs lists the networks by name.
var Specs = []Spec{ResNet18, ResNet50, Mini, MiniBottleneck}

// SpecByName returns a network's architecture.
func SpecByName(name string) (Spec, error) {
	for _, s := range Specs {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("graph: unknown network %q", name)
}

// Options are the fixed-point parameters.
type Options struct {
	LogT       int // ℓ (default 37, Cheetah's ResNet setting)
	WeightBits int // default 8
	AvgShift   int // average-pool reciprocal precision (default 12)
}

func (o Options) withDefaults() Options {
	if o.LogT == 0 {
		o.LogT = 37
	}
	if o.WeightBits == 0 {
		o.WeightBits = 8
	}
	if o.AvgShift == 0 {
		o.AvgShift = 12
	}
	return o
}

// builder appends operations and tracks the current value.
type builder struct {
	n    *Net
	cur  int
	bn   []bool // per op: the conv has a batch normalization (all but the FC)
	gmax []float64
}

func (b *builder) push(op Op) int {
	b.n.Ops = append(b.n.Ops, op)
	b.bn = append(b.bn, false)
	b.gmax = append(b.gmax, 0)
	return len(b.n.Ops)
}

func (b *builder) dims(v int) Dims { return b.n.dims(v) }

// conv appends a convolution with batch normalization (γ up to gmax) and
// its truncation; it returns the truncated value.
func (b *builder) conv(name string, in, co, k, stride, pad int, gmax float64) int {
	d := b.dims(in)
	s := linear.ConvShape{Ci: d.C, H: d.H, W: d.W, Co: co, Kh: k, Kw: k, Stride: stride, Pad: pad}
	v := b.push(Op{Kind: Conv, Name: name, In: []int{in}, Shape: s, Out: Dims{co, s.OutH(), s.OutW()}})
	b.bn[v-1], b.gmax[v-1] = true, gmax
	return b.push(Op{Kind: Trunc, Name: name + ".trunc", In: []int{v}, Out: b.dims(v)})
}

func (b *builder) relu(name string, in int) int {
	return b.push(Op{Kind: ReLU, Name: name, In: []int{in}, Out: b.dims(in)})
}

// Build returns the network of spec with seeded weights (see the package
// documentation) and the seeded input image at ActScale.
func Build(spec Spec, seed uint64, opt Options) (*Net, []int64, error) {
	b := architecture(spec, opt)
	img := Image(spec.Input, seed)
	if err := b.weights(seed, img); err != nil {
		return nil, nil, err
	}
	return b.n, img, b.n.Validate()
}

// architecture lays out the operations (weights and weight scales not yet
// set).
func architecture(spec Spec, opt Options) *builder {
	opt = opt.withDefaults()
	n := &Net{Name: spec.Name, LogT: opt.LogT, ActScale: share.Scale, WeightBits: opt.WeightBits, Input: spec.Input}
	b := &builder{n: n}
	x := b.conv("conv1", 0, spec.StemC, spec.StemK, spec.StemStride, spec.StemPad, 1)
	x = b.relu("relu1", x)
	d := b.dims(x)
	x = b.push(Op{Kind: MaxPool, Name: "maxpool", In: []int{x}, K: 3, Stride: 2, Pad: 1,
		Out: Dims{d.C, (d.H+2-3)/2 + 1, (d.W+2-3)/2 + 1}})
	for st, blocks := range spec.Blocks {
		for blk := 0; blk < blocks; blk++ {
			stride := 1
			if blk == 0 && st > 0 {
				stride = 2
			}
			pre := fmt.Sprintf("layer%d.%d", st+1, blk)
			in, c := x, b.dims(x).C
			var out, y int
			if spec.Bottleneck {
				w := spec.Widths[st]
				out = 4 * w
				y = b.relu(pre+".relu1", b.conv(pre+".conv1", in, w, 1, 1, 0, 1))
				y = b.relu(pre+".relu2", b.conv(pre+".conv2", y, w, 3, stride, 1, 1))
				y = b.conv(pre+".conv3", y, out, 1, 1, 0, 0.5)
			} else {
				out = spec.Widths[st]
				y = b.relu(pre+".relu1", b.conv(pre+".conv1", in, out, 3, stride, 1, 1))
				y = b.conv(pre+".conv2", y, out, 3, 1, 1, 0.5)
			}
			short := in
			if stride != 1 || c != out {
				short = b.conv(pre+".downsample", in, out, 1, stride, 0, 0.5)
			}
			x = b.relu(pre+".relu", b.push(Op{Kind: Add, Name: pre + ".add", In: []int{y, short}, Out: b.dims(y)}))
		}
	}
	d = b.dims(x)
	mul := int64(math.Round(math.Ldexp(1, opt.AvgShift) / float64(d.H*d.W)))
	x = b.push(Op{Kind: AvgPool, Name: "avgpool", In: []int{x}, Shift: opt.AvgShift, Mul: max(1, mul), Out: Dims{d.C, 1, 1}})
	fc := linear.FCShape(d.C, spec.Classes)
	x = b.push(Op{Kind: Conv, Name: "fc", In: []int{x}, Shape: fc, Out: Dims{spec.Classes, 1, 1}})
	b.push(Op{Kind: Trunc, Name: "fc.trunc", In: []int{x}, Out: b.dims(x)})
	return b
}

// Image returns a seeded random image of shape d at ActScale: pixels p
// uniform in 0…255, normalized to (p/255 − 0.5)/0.25.
func Image(d Dims, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 0x696d616765)) // "image"
	x := make([]int64, d.Len())
	for i := range x {
		p := float64(rng.IntN(256))
		x[i] = int64(math.Round(math.Ldexp((p/255-0.5)/0.25, share.Scale)))
	}
	return x
}

// weights draws the weights, calibrates and folds the batch
// normalizations on the float forward pass of img, and quantizes.
func (b *builder) weights(seed uint64, img []int64) error {
	n := b.n
	rng := rand.New(rand.NewPCG(seed, 0x776569676874)) // "weight"
	vals := make([][]float64, len(n.Ops)+1)
	vals[0] = make([]float64, len(img))
	for i, v := range img {
		vals[0][i] = math.Ldexp(float64(v), -n.ActScale)
	}
	wmax := float64(int64(1)<<(n.WeightBits-1) - 1)
	for i := range n.Ops {
		op := &n.Ops[i]
		in := vals[op.In[0]]
		out := make([]float64, op.Out.Len())
		switch op.Kind {
		case Conv:
			s := op.Shape
			fan := s.Ci / max(1, s.Groups) * s.Kh * s.Kw
			std := math.Sqrt(2 / float64(fan))
			w := make([]float64, s.WeightLen())
			for j := range w {
				w[j] = rng.NormFloat64() * std
			}
			bias := make([]float64, s.Co)
			convolve(s, w, nil, in, out)
			plane := s.OutH() * s.OutW()
			if b.bn[i] {
				// Batch normalization calibrated on this image, folded.
				for o := 0; o < s.Co; o++ {
					p := out[o*plane : (o+1)*plane]
					var mean, vr float64
					for _, v := range p {
						mean += v
					}
					mean /= float64(plane)
					for _, v := range p {
						vr += (v - mean) * (v - mean)
					}
					vr /= float64(plane)
					gamma := b.gmax[i] * (0.5 + 0.5*rng.Float64())
					beta := 0.1 * rng.NormFloat64()
					sc := gamma / math.Sqrt(vr+1e-5)
					for j := range w[o*fan : (o+1)*fan] {
						w[o*fan+j] *= sc
					}
					bias[o] = beta - mean*sc
					for j := range p {
						p[j] = (p[j]-mean)*sc + beta
					}
				}
			} else {
				for o := range bias {
					bias[o] = 0.01 * rng.NormFloat64()
					for j := range out[o*plane : (o+1)*plane] {
						out[o*plane+j] += bias[o]
					}
				}
			}
			// Quantize: the largest power-of-two scale with |w|·2^shift ≤ wmax.
			m := 0.0
			for _, v := range w {
				m = max(m, math.Abs(v))
			}
			shift := 30
			if m > 0 {
				shift = int(math.Floor(math.Log2(wmax / m)))
			}
			shift = max(1, min(shift, 30))
			op.Shift = shift
			op.W = make([]int64, len(w))
			for j, v := range w {
				op.W[j] = int64(max(-wmax, min(wmax, math.Round(math.Ldexp(v, shift)))))
			}
			op.B = make([]int64, len(bias))
			for j, v := range bias {
				op.B[j] = int64(math.Round(math.Ldexp(v, n.ActScale+shift)))
			}
		case Trunc:
			op.Shift = n.Ops[op.In[0]-1].Shift
			copy(out, in)
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
				for _, v := range in[c*plane : (c+1)*plane] {
					out[c] += v
				}
				out[c] /= float64(plane)
			}
		case Add:
			for j := range out {
				out[j] = in[j] + vals[op.In[1]][j]
			}
		}
		vals[i+1] = out
		// Free values no later operation reads (the ResNets are long).
		for v := range vals[:i+1] {
			if vals[v] != nil && !readLater(n, v, i) {
				vals[v] = nil
			}
		}
	}
	return nil
}

// readLater reports whether an operation after op i reads value v.
func readLater(n *Net, v, i int) bool {
	for _, op := range n.Ops[i+1:] {
		for _, u := range op.In {
			if u == v {
				return true
			}
		}
	}
	return false
}
