package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Quantized is the fixed-point network both the plaintext reference and
// the private protocol compute.
//
// Activations are fixed point with ActScale = 12 fractional bits (pixels
// p/255 → round(p·2^12/255)). Layer i has integer weights W[i] with
// |w| ≤ 2^(WeightBits-1)-1 at scale Shift[i] (real weight ≈ w/2^Shift[i])
// and biases B[i] at scale ActScale+Shift[i]. It computes
//
//	acc = conv(x; W[i]) + B[i]                 (scale ActScale+Shift[i])
//	x'  = ReLU(⌊acc / 2^Shift[i]⌋)             (scale ActScale; not on the last layer)
//
// and the last layer's acc are the logits. All values are signed integers
// that stay below 2^(LogT-1) in magnitude for every possible image (see
// StaticBound), so the same computation on additive shares mod 2^LogT never
// wraps.
type Quantized struct {
	Arch       Arch
	LogT       int // ℓ: shares are mod 2^ℓ
	ActScale   int
	WeightBits int
	Shift      []int
	W          [][]int64 // per layer, OIHW
	B          [][]int64 // per layer, per output channel
}

// Quantization limits.
const (
	MinLogT      = 16
	MaxLogT      = 44 // leaves one bit below cheetah.MaxLogT for OptiEncode's C ≥ 2
	maxShift     = 30
	maxWeightBit = 16
)

// Quantize converts a float network: per layer the largest power-of-two
// weight scale with every |w|·2^shift ≤ 2^(weightBits-1)-1, biases at the
// accumulator scale, and the smallest ℓ ≥ MinLogT whose signed range holds
// the worst-case accumulator of any image with one bit to spare.
func Quantize(f *Float, weightBits int) (*Quantized, error) {
	if weightBits < 2 || weightBits > maxWeightBit {
		return nil, fmt.Errorf("model: weight bits %d outside [2, %d]", weightBits, maxWeightBit)
	}
	if err := f.Arch.Validate(); err != nil {
		return nil, err
	}
	q := &Quantized{Arch: f.Arch, ActScale: share.Scale, WeightBits: weightBits, LogT: MaxLogT}
	wmax := float64(int64(1)<<(weightBits-1) - 1)
	for i := range f.Arch {
		var m float64
		for _, w := range f.W[i] {
			if math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("model: layer %d has a non-finite weight", i)
			}
			m = max(m, math.Abs(w))
		}
		shift := maxShift
		if m > 0 {
			shift = int(math.Floor(math.Log2(wmax / m)))
			for shift > 0 && math.Round(m*math.Ldexp(1, shift)) > wmax {
				shift--
			}
			shift = max(0, min(shift, maxShift))
		}
		ws := make([]int64, len(f.W[i]))
		for j, w := range f.W[i] {
			v := math.Round(math.Ldexp(w, shift))
			ws[j] = int64(max(-wmax, min(wmax, v)))
		}
		bs := make([]int64, len(f.B[i]))
		for j, b := range f.B[i] {
			v := math.Round(math.Ldexp(b, q.ActScale+shift))
			if math.IsNaN(v) || math.Abs(v) > math.Ldexp(1, 50) {
				return nil, fmt.Errorf("model: layer %d bias %d out of range", i, j)
			}
			bs[j] = int64(v)
		}
		q.Shift = append(q.Shift, shift)
		q.W = append(q.W, ws)
		q.B = append(q.B, bs)
	}
	bits := q.StaticBits()
	if bits+1 > MaxLogT {
		return nil, fmt.Errorf("model: worst-case accumulators need %d bits, more than ℓ = %d allows", bits, MaxLogT)
	}
	q.LogT = max(MinLogT, bits+1)
	return q, q.Validate()
}

// Validate checks the architecture, the scales and that every weight and
// bias respects its bound.
func (q *Quantized) Validate() error {
	if err := q.ValidatePublic(); err != nil {
		return err
	}
	n := len(q.Arch)
	if len(q.W) != n || len(q.B) != n {
		return errors.New("model: per-layer weights do not match the architecture")
	}
	wmax := int64(1)<<(q.WeightBits-1) - 1
	for i, s := range q.Arch {
		if len(q.W[i]) != s.WeightLen() || len(q.B[i]) != s.Co {
			return fmt.Errorf("model: layer %d: %d weights and %d biases, want %d and %d", i, len(q.W[i]), len(q.B[i]), s.WeightLen(), s.Co)
		}
		for j, w := range q.W[i] {
			if w < -wmax || w > wmax {
				return fmt.Errorf("model: layer %d: weight %d = %d exceeds ±%d", i, j, w, wmax)
			}
		}
		for j, b := range q.B[i] {
			if b <= -(int64(1)<<(q.LogT-2)) || b >= int64(1)<<(q.LogT-2) {
				return fmt.Errorf("model: layer %d: bias %d = %d exceeds 2^%d", i, j, b, q.LogT-2)
			}
		}
	}
	if bits := q.StaticBits(); bits >= q.LogT {
		return fmt.Errorf("model: worst-case accumulators need %d bits but ℓ = %d", bits, q.LogT)
	}
	return nil
}

// ValidatePublic checks the public part (architecture, scales, ℓ), which is
// all a client receives.
func (q *Quantized) ValidatePublic() error {
	if err := q.Arch.Validate(); err != nil {
		return err
	}
	if q.LogT < MinLogT || q.LogT > MaxLogT {
		return fmt.Errorf("model: ℓ = %d outside [%d, %d]", q.LogT, MinLogT, MaxLogT)
	}
	if q.ActScale < 0 || q.ActScale > 20 {
		return fmt.Errorf("model: activation scale %d outside [0, 20]", q.ActScale)
	}
	if q.WeightBits < 2 || q.WeightBits > maxWeightBit {
		return fmt.Errorf("model: weight bits %d outside [2, %d]", q.WeightBits, maxWeightBit)
	}
	if len(q.Shift) != len(q.Arch) {
		return errors.New("model: per-layer shifts do not match the architecture")
	}
	for i, sh := range q.Shift {
		if sh < 0 || sh > maxShift {
			return fmt.Errorf("model: layer %d: shift %d outside [0, %d]", i, sh, maxShift)
		}
	}
	return nil
}

// StaticBits returns b such that every accumulator (and activation) of
// every possible image lies in (-2^(b-1), 2^(b-1)): a worst case over
// inputs in [0, 2^ActScale] propagated with per-output-channel ℓ1 norms.
func (q *Quantized) StaticBits() int {
	maxIn := math.Ldexp(1, q.ActScale) // activations are non-negative
	var worst float64
	for i, s := range q.Arch {
		per := s.Ci * s.Kh * s.Kw
		var layerMax float64
		for o := 0; o < s.Co; o++ {
			var l1 float64
			for _, w := range q.W[i][o*per : (o+1)*per] {
				l1 += math.Abs(float64(w))
			}
			layerMax = max(layerMax, l1*maxIn+math.Abs(float64(q.B[i][o])))
		}
		worst = max(worst, layerMax)
		maxIn = math.Floor(layerMax / math.Ldexp(1, q.Shift[i]))
	}
	return int(math.Floor(math.Log2(worst+1))) + 2
}

// Input encodes an image at scale ActScale: round(p·2^ActScale/255).
func (q *Quantized) Input(img []byte) ([]int64, error) {
	if len(img) != ImageSize {
		return nil, fmt.Errorf("model: image has %d bytes, want %d", len(img), ImageSize)
	}
	x := make([]int64, len(img))
	one := int64(1) << q.ActScale
	for i, p := range img {
		x[i] = (int64(p)*one*2 + 255) / 510 // round half up
	}
	return x, nil
}

// Conv computes the integer convolution plus bias of layer i.
func (q *Quantized) Conv(i int, x []int64) ([]int64, error) {
	if i < 0 || i >= len(q.Arch) {
		return nil, fmt.Errorf("model: no layer %d", i)
	}
	s := q.Arch[i]
	if len(x) != s.InputLen() {
		return nil, fmt.Errorf("model: layer %d input has %d values, want %d", i, len(x), s.InputLen())
	}
	oh, ow := s.OutH(), s.OutW()
	out := make([]int64, s.OutputLen())
	for o := 0; o < s.Co; o++ {
		for y := 0; y < oh; y++ {
			for xx := 0; xx < ow; xx++ {
				acc := q.B[i][o]
				for c := 0; c < s.Ci; c++ {
					for ky := 0; ky < s.Kh; ky++ {
						iy := y*s.Stride + ky - s.Pad
						if iy < 0 || iy >= s.H {
							continue
						}
						for kx := 0; kx < s.Kw; kx++ {
							ix := xx*s.Stride + kx - s.Pad
							if ix < 0 || ix >= s.W {
								continue
							}
							acc += q.W[i][((o*s.Ci+c)*s.Kh+ky)*s.Kw+kx] * x[(c*s.H+iy)*s.W+ix]
						}
					}
				}
				out[(o*oh+y)*ow+xx] = acc
			}
		}
	}
	return out, nil
}

// Forward is the plaintext quantized reference: it returns the logits
// (scale ActScale+Shift[last]).
func (q *Quantized) Forward(img []byte) ([]int64, error) {
	x, err := q.Input(img)
	if err != nil {
		return nil, err
	}
	for i := range q.Arch {
		acc, err := q.Conv(i, x)
		if err != nil {
			return nil, err
		}
		if i == len(q.Arch)-1 {
			return acc, nil
		}
		for j, v := range acc {
			acc[j] = max(0, v>>q.Shift[i]) // arithmetic shift: ⌊v/2^s⌋
		}
		x = acc
	}
	return nil, errors.New("model: empty network")
}

// Predict returns the reference class of an image.
func (q *Quantized) Predict(img []byte) (int, error) {
	l, err := q.Forward(img)
	if err != nil {
		return 0, err
	}
	return Argmax(l), nil
}

// Accuracy returns the reference's accuracy on a dataset.
func (q *Quantized) Accuracy(d Dataset) (float64, error) {
	if d.Len() == 0 {
		return 0, errors.New("model: empty dataset")
	}
	ok := 0
	for i, img := range d.Images {
		p, err := q.Predict(img)
		if err != nil {
			return 0, fmt.Errorf("model: image %d: %w", i, err)
		}
		if p == int(d.Labels[i]) {
			ok++
		}
	}
	return float64(ok) / float64(d.Len()), nil
}

// Argmax returns the index of the first largest value.
func Argmax(v []int64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// LogitErrorBound bounds |private − reference| for every logit when each
// truncation may return ⌊x/2^s⌋ or one less (package nonlinear's
// Truncate): an error e on a layer's input changes its accumulator by at
// most ‖row‖₁·e, which after the shift is at most ⌈‖row‖₁·e/2^s⌉ plus the
// truncation's own 1 (ReLU does not increase errors). The last layer has
// no truncation.
func (q *Quantized) LogitErrorBound() int64 {
	var e int64 // error of the current layer's input (exact image)
	for i, s := range q.Arch {
		per := s.Ci * s.Kh * s.Kw
		var l1max int64
		for o := 0; o < s.Co; o++ {
			var l1 int64
			for _, w := range q.W[i][o*per : (o+1)*per] {
				l1 += abs64(w)
			}
			l1max = max(l1max, l1)
		}
		accErr := l1max * e
		if i == len(q.Arch)-1 {
			return accErr
		}
		den := int64(1) << q.Shift[i]
		e = (accErr+den-1)/den + 1
	}
	return 0
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// RingWeights returns layer i's weights as elements of Z_{2^ℓ} (two's
// complement), the form optiprime/linear takes.
func (q *Quantized) RingWeights(i int) []uint64 { return toRing(q.W[i], q.LogT) }

// RingBias returns layer i's biases in Z_{2^ℓ}.
func (q *Quantized) RingBias(i int) []uint64 { return toRing(q.B[i], q.LogT) }

func toRing(v []int64, logT int) []uint64 {
	mask := uint64(1)<<logT - 1
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = uint64(x) & mask
	}
	return out
}

// Public returns the model without its weights and biases: what the client
// may know (architecture, scales, ℓ).
func (q *Quantized) Public() *Quantized {
	return &Quantized{Arch: append(Arch(nil), q.Arch...), LogT: q.LogT, ActScale: q.ActScale, WeightBits: q.WeightBits, Shift: append([]int(nil), q.Shift...)}
}
