package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// Arch is the layer list of a network: convolutions (fully-connected
// layers are 1×1 convolutions on a 1×1 image, linear.FCShape), each
// followed by a ReLU except the last. A layer's input is the previous
// layer's output flattened in CHW order.
type Arch []linear.ConvShape

// DefaultArch is the MNIST CNN: conv 5×5 ×8 stride 2 pad 2 (28×28 → 14×14),
// ReLU, conv 5×5 ×16 stride 2 (14×14 → 5×5), ReLU, FC 400 → 10.
func DefaultArch() Arch {
	return Arch{
		{Ci: 1, H: ImageH, W: ImageW, Co: 8, Kh: 5, Kw: 5, Stride: 2, Pad: 2},
		{Ci: 8, H: 14, W: 14, Co: 16, Kh: 5, Kw: 5, Stride: 2, Pad: 0},
		linear.FCShape(400, Classes),
	}
}

// Validate checks that the layers chain (each input size equals the
// previous output size), that the input is one MNIST image and the output
// the class scores.
func (a Arch) Validate() error {
	if len(a) == 0 {
		return errors.New("model: empty architecture")
	}
	if len(a) > maxLayers {
		return fmt.Errorf("model: %d layers exceed the limit %d", len(a), maxLayers)
	}
	for i, s := range a {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("model: layer %d: %w", i, err)
		}
		if s.Groups > 1 {
			return fmt.Errorf("model: layer %d: grouped convolutions are not supported", i)
		}
		if s.InputLen() > maxTensor || s.OutputLen() > maxTensor || s.WeightLen() > maxTensor {
			return fmt.Errorf("model: layer %d: tensor too large", i)
		}
		if i > 0 && s.InputLen() != a[i-1].OutputLen() {
			return fmt.Errorf("model: layer %d takes %d inputs but layer %d gives %d", i, s.InputLen(), i-1, a[i-1].OutputLen())
		}
	}
	if a[0].InputLen() != ImageSize {
		return fmt.Errorf("model: input size %d, want %d", a[0].InputLen(), ImageSize)
	}
	if a[len(a)-1].OutputLen() != Classes {
		return fmt.Errorf("model: output size %d, want %d", a[len(a)-1].OutputLen(), Classes)
	}
	return nil
}

const (
	maxLayers = 64
	maxTensor = 1 << 22
)

// Float is a network with real weights (training and the float reference).
type Float struct {
	Arch Arch
	W    [][]float64 // per layer, OIHW
	B    [][]float64 // per layer, one bias per output channel
}

// NewFloat initializes a network with He-normal weights and zero biases
// from a deterministic seed (training is reproducible; the seed is not a
// secret, so math/rand/v2's PCG is used, not crypto/rand).
func NewFloat(a Arch, seed uint64) (*Float, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	f := &Float{Arch: a}
	for _, s := range a {
		w := make([]float64, s.WeightLen())
		std := math.Sqrt(2 / float64(s.Ci*s.Kh*s.Kw))
		for i := range w {
			w[i] = rng.NormFloat64() * std
		}
		f.W = append(f.W, w)
		f.B = append(f.B, make([]float64, s.Co))
	}
	return f, nil
}

// convForward computes out = conv(in; w) + b for a dense convolution.
func convForward(s linear.ConvShape, w, b, in, out []float64) {
	oh, ow := s.OutH(), s.OutW()
	for o := 0; o < s.Co; o++ {
		op := out[o*oh*ow : (o+1)*oh*ow]
		for i := range op {
			op[i] = b[o]
		}
		for c := 0; c < s.Ci; c++ {
			ip := in[c*s.H*s.W : (c+1)*s.H*s.W]
			for ky := 0; ky < s.Kh; ky++ {
				for kx := 0; kx < s.Kw; kx++ {
					wv := w[((o*s.Ci+c)*s.Kh+ky)*s.Kw+kx]
					if wv == 0 {
						continue
					}
					for y := 0; y < oh; y++ {
						iy := y*s.Stride + ky - s.Pad
						if iy < 0 || iy >= s.H {
							continue
						}
						row := ip[iy*s.W : (iy+1)*s.W]
						orow := op[y*ow : (y+1)*ow]
						for x := 0; x < ow; x++ {
							ix := x*s.Stride + kx - s.Pad
							if ix < 0 || ix >= s.W {
								continue
							}
							orow[x] += wv * row[ix]
						}
					}
				}
			}
		}
	}
}

// convBackward accumulates dW, dB and (if dIn != nil) dIn from dOut.
func convBackward(s linear.ConvShape, w, in, dOut, dW, dB, dIn []float64) {
	oh, ow := s.OutH(), s.OutW()
	for o := 0; o < s.Co; o++ {
		dp := dOut[o*oh*ow : (o+1)*oh*ow]
		for _, v := range dp {
			dB[o] += v
		}
		for c := 0; c < s.Ci; c++ {
			ip := in[c*s.H*s.W : (c+1)*s.H*s.W]
			var dip []float64
			if dIn != nil {
				dip = dIn[c*s.H*s.W : (c+1)*s.H*s.W]
			}
			for ky := 0; ky < s.Kh; ky++ {
				for kx := 0; kx < s.Kw; kx++ {
					wi := ((o*s.Ci+c)*s.Kh+ky)*s.Kw + kx
					wv := w[wi]
					var g float64
					for y := 0; y < oh; y++ {
						iy := y*s.Stride + ky - s.Pad
						if iy < 0 || iy >= s.H {
							continue
						}
						for x := 0; x < ow; x++ {
							ix := x*s.Stride + kx - s.Pad
							if ix < 0 || ix >= s.W {
								continue
							}
							d := dp[y*ow+x]
							g += d * ip[iy*s.W+ix]
							if dip != nil {
								dip[iy*s.W+ix] += d * wv
							}
						}
					}
					dW[wi] += g
				}
			}
		}
	}
}

// pixels converts an image to reals in [0, 1].
func pixels(img []byte, dst []float64) {
	for i, p := range img {
		dst[i] = float64(p) / 255
	}
}

// workspace holds per-example activations and gradients.
type workspace struct {
	act  [][]float64 // act[0] = input, act[i+1] = output of layer i (after ReLU except last)
	grad [][]float64 // gradient w.r.t. act[i]
}

func newWorkspace(a Arch) *workspace {
	ws := &workspace{}
	ws.act = append(ws.act, make([]float64, a[0].InputLen()))
	ws.grad = append(ws.grad, nil)
	for _, s := range a {
		ws.act = append(ws.act, make([]float64, s.OutputLen()))
		ws.grad = append(ws.grad, make([]float64, s.OutputLen()))
	}
	return ws
}

func (f *Float) forward(ws *workspace, img []byte) []float64 {
	pixels(img, ws.act[0])
	for i, s := range f.Arch {
		convForward(s, f.W[i], f.B[i], ws.act[i], ws.act[i+1])
		if i < len(f.Arch)-1 {
			for j, v := range ws.act[i+1] {
				if v < 0 {
					ws.act[i+1][j] = 0
				}
			}
		}
	}
	return ws.act[len(f.Arch)]
}

// Logits returns the float network's class scores for an image.
func (f *Float) Logits(img []byte) ([]float64, error) {
	if len(img) != ImageSize {
		return nil, fmt.Errorf("model: image has %d bytes, want %d", len(img), ImageSize)
	}
	ws := newWorkspace(f.Arch)
	out := f.forward(ws, img)
	return append([]float64(nil), out...), nil
}

// softmaxCE returns the cross-entropy loss and writes its gradient with
// respect to the logits into d.
func softmaxCE(logits []float64, label int, d []float64) float64 {
	m := logits[0]
	for _, v := range logits {
		m = max(m, v)
	}
	var z float64
	for i, v := range logits {
		d[i] = math.Exp(v - m)
		z += d[i]
	}
	for i := range d {
		d[i] /= z
	}
	loss := -math.Log(max(d[label], 1e-300))
	d[label]--
	return loss
}

// backward accumulates the gradients of one example (after forward).
func (f *Float) backward(ws *workspace, label int, dW, dB [][]float64) float64 {
	L := len(f.Arch)
	loss := softmaxCE(ws.act[L], label, ws.grad[L])
	for i := L - 1; i >= 0; i-- {
		if i < L-1 { // ReLU after layer i
			for j, v := range ws.act[i+1] {
				if v <= 0 {
					ws.grad[i+1][j] = 0
				}
			}
		}
		var dIn []float64
		if i > 0 {
			dIn = ws.grad[i]
			clear(dIn)
		}
		convBackward(f.Arch[i], f.W[i], ws.act[i], ws.grad[i+1], dW[i], dB[i], dIn)
	}
	return loss
}

// TrainOptions configure SGD.
type TrainOptions struct {
	Epochs   int
	Batch    int
	LR       float64 // initial learning rate, halved after every epoch
	Momentum float64
	Seed     uint64 // initialization and shuffling
	// Progress, if set, is called after every epoch.
	Progress func(epoch int, loss float64)
}

// DefaultTrainOptions train DefaultArch to about 98–99% test accuracy.
var DefaultTrainOptions = TrainOptions{Epochs: 4, Batch: 32, LR: 0.05, Momentum: 0.9, Seed: 1}

// Train runs minibatch SGD with momentum on the dataset and returns the
// mean loss of the last epoch.
func (f *Float) Train(d Dataset, opt TrainOptions) (float64, error) {
	if d.Len() == 0 {
		return 0, errors.New("model: empty training set")
	}
	if opt.Epochs <= 0 || opt.Batch <= 0 || !(opt.LR > 0) || opt.Momentum < 0 || opt.Momentum >= 1 {
		return 0, fmt.Errorf("model: bad training options %+v", opt)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x2545f4914f6cdd1d))
	ws := newWorkspace(f.Arch)
	zeros := func() [][]float64 {
		var g [][]float64
		for _, w := range f.W {
			g = append(g, make([]float64, len(w)))
		}
		return g
	}
	zerosB := func() [][]float64 {
		var g [][]float64
		for _, b := range f.B {
			g = append(g, make([]float64, len(b)))
		}
		return g
	}
	dW, dB, vW, vB := zeros(), zerosB(), zeros(), zerosB()
	order := make([]int, d.Len())
	for i := range order {
		order[i] = i
	}
	lr := opt.LR
	var epochLoss float64
	for ep := 0; ep < opt.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		epochLoss = 0
		for start := 0; start < len(order); start += opt.Batch {
			end := min(start+opt.Batch, len(order))
			for i := range dW {
				clear(dW[i])
				clear(dB[i])
			}
			for _, idx := range order[start:end] {
				img := d.Images[idx]
				if len(img) != ImageSize || int(d.Labels[idx]) >= Classes {
					return 0, fmt.Errorf("model: bad example %d", idx)
				}
				f.forward(ws, img)
				epochLoss += f.backward(ws, int(d.Labels[idx]), dW, dB)
			}
			scale := lr / float64(end-start)
			for i := range f.W {
				for j := range f.W[i] {
					vW[i][j] = opt.Momentum*vW[i][j] - scale*dW[i][j]
					f.W[i][j] += vW[i][j]
				}
				for j := range f.B[i] {
					vB[i][j] = opt.Momentum*vB[i][j] - scale*dB[i][j]
					f.B[i][j] += vB[i][j]
				}
			}
		}
		epochLoss /= float64(len(order))
		if math.IsNaN(epochLoss) {
			return 0, errors.New("model: training diverged (NaN loss)")
		}
		if opt.Progress != nil {
			opt.Progress(ep, epochLoss)
		}
		lr /= 2
	}
	return epochLoss, nil
}

// Accuracy returns the fraction of examples the float network classifies
// correctly.
func (f *Float) Accuracy(d Dataset) float64 {
	if d.Len() == 0 {
		return 0
	}
	ws := newWorkspace(f.Arch)
	ok := 0
	for i, img := range d.Images {
		if len(img) == ImageSize && argmaxF(f.forward(ws, img)) == int(d.Labels[i]) {
			ok++
		}
	}
	return float64(ok) / float64(d.Len())
}

func argmaxF(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
