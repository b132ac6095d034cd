package linear

import (
	"fmt"
	"strings"
)

// ConvShape is a 2-D convolution layer (NCHW, batch 1, square stride and
// symmetric zero padding).
type ConvShape struct {
	Ci, H, W int // input channels and spatial size (unpadded)
	Co       int // output channels
	Kh, Kw   int // kernel size
	Stride   int
	Pad      int
	Groups   int // grouped convolution (0 or 1: dense; depthwise: Groups = Ci = Co)
}

// FCShape is a fully-connected layer y = W·x with W of size out×in,
// expressed as a 1×1 convolution on a 1×1 image.
func FCShape(in, out int) ConvShape {
	return ConvShape{Ci: in, H: 1, W: 1, Co: out, Kh: 1, Kw: 1, Stride: 1}
}

// Validate checks the shape.
func (s ConvShape) Validate() error {
	if s.Ci <= 0 || s.H <= 0 || s.W <= 0 || s.Co <= 0 || s.Kh <= 0 || s.Kw <= 0 || s.Stride <= 0 || s.Pad < 0 {
		return fmt.Errorf("linear: invalid shape %+v", s)
	}
	if g := s.groups(); s.Ci%g != 0 || s.Co%g != 0 {
		return fmt.Errorf("linear: %d groups do not divide Ci=%d and Co=%d", g, s.Ci, s.Co)
	}
	if s.Kh > s.H+2*s.Pad || s.Kw > s.W+2*s.Pad {
		return fmt.Errorf("linear: kernel %dx%d larger than padded input %dx%d", s.Kh, s.Kw, s.H+2*s.Pad, s.W+2*s.Pad)
	}
	return nil
}

// Hp, Wp are the padded input sizes.
func (s ConvShape) Hp() int { return s.H + 2*s.Pad }

// Wp is the padded input width.
func (s ConvShape) Wp() int { return s.W + 2*s.Pad }

// OutH is the output height.
func (s ConvShape) OutH() int { return (s.Hp()-s.Kh)/s.Stride + 1 }

// OutW is the output width.
func (s ConvShape) OutW() int { return (s.Wp()-s.Kw)/s.Stride + 1 }

// InputLen, OutputLen and WeightLen are the tensor sizes (CHW, CHW, OIHW).
func (s ConvShape) InputLen() int  { return s.Ci * s.H * s.W }
func (s ConvShape) OutputLen() int { return s.Co * s.OutH() * s.OutW() }
func (s ConvShape) WeightLen() int { return s.Co * (s.Ci / s.groups()) * s.Kh * s.Kw }

func (s ConvShape) groups() int {
	if s.Groups < 1 {
		return 1
	}
	return s.Groups
}

// weightIndex returns the OIHW index of weight (o, ch, ki, kj), or false if
// input channel ch is not in output channel o's group.
func (s ConvShape) weightIndex(o, ch, ki, kj int) (int, bool) {
	cig, cog := s.Ci/s.groups(), s.Co/s.groups()
	g := o / cog
	if ch/cig != g {
		return 0, false
	}
	return ((o*cig+ch-g*cig)*s.Kh+ki)*s.Kw + kj, true
}

// groupChannels returns the input channel range [lo, hi) of output channel o.
func (s ConvShape) groupChannels(o int) (lo, hi int) {
	cig, cog := s.Ci/s.groups(), s.Co/s.groups()
	g := o / cog
	return g * cig, (g + 1) * cig
}

// isFC reports whether the shape is a matrix-vector product.
func (s ConvShape) isFC() bool {
	return s.H == 1 && s.W == 1 && s.Kh == 1 && s.Kw == 1 && s.Pad == 0 && s.groups() == 1
}

// Protocol selects a linear-layer protocol.
type Protocol int

// The protocols.
const (
	Cheetah Protocol = iota
	OptiEncode
	OptiEncodeBSGS
)

// OptiPrime is not a layout but a choice per layer: NewPlan returns the
// plan of whichever of Protocols its cost model (Plan.Cost) finds cheapest
// for the layer, so a network mixes Cheetah's coefficient encoding,
// OptiEncode and OptiEncode-BSGS layer by layer. Both parties derive the
// same choice from the public shape.
const OptiPrime Protocol = 3

// Protocols lists the layouts (OptiPrime chooses among them).
var Protocols = []Protocol{Cheetah, OptiEncode, OptiEncodeBSGS}

// Valid reports whether p is one of Protocols or OptiPrime.
func (p Protocol) Valid() bool { return p >= Cheetah && p <= OptiPrime }

func (p Protocol) String() string {
	switch p {
	case Cheetah:
		return "cheetah"
	case OptiEncode:
		return "optiencode"
	case OptiEncodeBSGS:
		return "optiencode-bsgs"
	case OptiPrime:
		return "optiprime"
	}
	return fmt.Sprintf("protocol(%d)", int(p))
}

// ParseProtocol parses a protocol name.
func ParseProtocol(s string) (Protocol, error) {
	for _, p := range append(Protocols, OptiPrime) {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("linear: unknown protocol %q (want cheetah, optiencode, optiencode-bsgs or optiprime)", s)
}

// Counters are the costs of one layer under one protocol.
type Counters struct {
	OutputCts     int64 `json:"output_cts"`
	InputCts      int64 `json:"input_cts"`
	Automorphisms int64 `json:"automorphisms"`
	CPMults       int64 `json:"cpmults"`
	BytesC2S      int64 `json:"bytes_c2s"`
	BytesS2C      int64 `json:"bytes_s2c"`
}

// Add accumulates c2 into c.
func (c *Counters) Add(c2 Counters) {
	c.OutputCts += c2.OutputCts
	c.InputCts += c2.InputCts
	c.Automorphisms += c2.Automorphisms
	c.CPMults += c2.CPMults
	c.BytesC2S += c2.BytesC2S
	c.BytesS2C += c2.BytesS2C
}

// Options are the protocol options.
type Options struct {
	LogT       int // ℓ: shares are mod 2^ℓ (1..45)
	WeightBits int // public bound: centered weights satisfy |w| ≤ 2^(WeightBits-1); 0 means ℓ
	Lambda     int // noise-flooding statistical parameter; 0 means cheetah.DefaultFloodLambda
}

func (o Options) withDefaults() (Options, error) {
	if o.LogT < 1 || o.LogT > 45 {
		return o, fmt.Errorf("linear: ℓ=%d outside [1,45]", o.LogT)
	}
	if o.WeightBits == 0 || o.WeightBits > o.LogT {
		o.WeightBits = o.LogT
	}
	if o.WeightBits < 1 {
		return o, fmt.Errorf("linear: weight bits %d < 1", o.WeightBits)
	}
	if o.Lambda == 0 {
		o.Lambda = 40
	}
	return o, nil
}
