package nets

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// Layer is one linear layer, repeated Count times with the same shape.
type Layer struct {
	Name  string           `json:"name"`
	Shape linear.ConvShape `json:"shape"`
	Count int              `json:"count"`
}

// Network is a named list of linear layers.
type Network struct {
	Name   string  `json:"name"`
	Layers []Layer `json:"layers"`
}

func conv(name string, ci, h, co, k, stride, pad int) Layer {
	return Layer{Name: name, Shape: linear.ConvShape{Ci: ci, H: h, W: h, Co: co, Kh: k, Kw: k, Stride: stride, Pad: pad}, Count: 1}
}

func fc(name string, in, out int) Layer {
	return Layer{Name: name, Shape: linear.FCShape(in, out), Count: 1}
}

// ResNet18 is torchvision's resnet18 at 224×224.
func ResNet18() Network {
	n := Network{Name: "resnet18"}
	n.Layers = append(n.Layers, conv("conv1", 3, 224, 64, 7, 2, 3)) // then max-pool → 56
	h, c := 56, 64
	for stage, co := range []int{64, 128, 256, 512} {
		for b := 0; b < 2; b++ {
			stride := 1
			if b == 0 && stage > 0 {
				stride = 2
			}
			pre := fmt.Sprintf("layer%d.%d", stage+1, b)
			n.Layers = append(n.Layers, conv(pre+".conv1", c, h, co, 3, stride, 1))
			if stride == 2 || c != co {
				n.Layers = append(n.Layers, conv(pre+".downsample", c, h, co, 1, stride, 0))
			}
			h /= stride
			n.Layers = append(n.Layers, conv(pre+".conv2", co, h, co, 3, 1, 1))
			c = co
		}
	}
	n.Layers = append(n.Layers, fc("fc", 512, 1000))
	return n
}

// ResNet50 is torchvision's resnet50 (v1.5: stride in the 3×3) at 224×224.
func ResNet50() Network {
	n := Network{Name: "resnet50"}
	n.Layers = append(n.Layers, conv("conv1", 3, 224, 64, 7, 2, 3))
	h, c := 56, 64
	for stage, blocks := range []int{3, 4, 6, 3} {
		width := 64 << uint(stage)
		out := width * 4
		for b := 0; b < blocks; b++ {
			stride := 1
			if b == 0 && stage > 0 {
				stride = 2
			}
			pre := fmt.Sprintf("layer%d.%d", stage+1, b)
			n.Layers = append(n.Layers, conv(pre+".conv1", c, h, width, 1, 1, 0))
			n.Layers = append(n.Layers, conv(pre+".conv2", width, h, width, 3, stride, 1))
			if b == 0 {
				n.Layers = append(n.Layers, conv(pre+".downsample", c, h, out, 1, stride, 0))
			}
			h /= stride
			n.Layers = append(n.Layers, conv(pre+".conv3", width, h, out, 1, 1, 0))
			c = out
		}
	}
	n.Layers = append(n.Layers, fc("fc", 2048, 1000))
	return n
}

// VGG16 is torchvision's vgg16 at 224×224.
func VGG16() Network {
	n := Network{Name: "vgg16"}
	h, c := 224, 3
	i := 0
	for _, v := range []int{64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0} {
		if v == 0 {
			h /= 2 // max-pool
			continue
		}
		i++
		n.Layers = append(n.Layers, conv(fmt.Sprintf("conv%d", i), c, h, v, 3, 1, 1))
		c = v
	}
	n.Layers = append(n.Layers, fc("fc1", 512*7*7, 4096), fc("fc2", 4096, 4096), fc("fc3", 4096, 1000))
	return n
}

// MobileNetV2 is torchvision's mobilenet_v2 (width 1.0) at 224×224; the
// depthwise convolutions are grouped convolutions with Groups = channels.
func MobileNetV2() Network {
	n := Network{Name: "mobilenetv2"}
	n.Layers = append(n.Layers, conv("features.0", 3, 224, 32, 3, 2, 1))
	h, c := 112, 32
	idx := 1
	for _, blk := range [][4]int{{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}} {
		t, co, reps, s := blk[0], blk[1], blk[2], blk[3]
		for r := 0; r < reps; r++ {
			stride := 1
			if r == 0 {
				stride = s
			}
			pre := fmt.Sprintf("features.%d", idx)
			hid := c * t
			if t != 1 {
				n.Layers = append(n.Layers, conv(pre+".expand", c, h, hid, 1, 1, 0))
			}
			dw := conv(pre+".depthwise", hid, h, hid, 3, stride, 1)
			dw.Shape.Groups = hid
			n.Layers = append(n.Layers, dw)
			h = (h+2-3)/stride + 1
			n.Layers = append(n.Layers, conv(pre+".project", hid, h, co, 1, 1, 0))
			c = co
			idx++
		}
	}
	n.Layers = append(n.Layers, conv("features.18", 320, h, 1280, 1, 1, 0))
	n.Layers = append(n.Layers, fc("classifier", 1280, 1000))
	return n
}

// BERTBase lists the weight-bearing linear layers of BERT-base (12 layers,
// hidden 768, FFN 3072) over seq tokens, each as a 1×1 convolution on a
// seq×1 image (tokens as the spatial dimension).
func BERTBase(seq int) Network {
	lin := func(name string, in, out int) Layer {
		return Layer{Name: name, Shape: linear.ConvShape{Ci: in, H: seq, W: 1, Co: out, Kh: 1, Kw: 1, Stride: 1}, Count: 12}
	}
	return Network{Name: fmt.Sprintf("bert-base-%d", seq), Layers: []Layer{
		lin("attention.qkv", 768, 3*768), // Q, K and V projections side by side
		lin("attention.output", 768, 768),
		lin("ffn.intermediate", 768, 3072),
		lin("ffn.output", 3072, 768),
	}}
}

// All returns the five evaluation networks (BERT over 128 tokens).
func All() []Network {
	return []Network{ResNet18(), ResNet50(), VGG16(), MobileNetV2(), BERTBase(128)}
}

// ByName returns a network by name.
func ByName(name string) (Network, error) {
	for _, n := range All() {
		if n.Name == name {
			return n, nil
		}
	}
	return Network{}, fmt.Errorf("nets: unknown network %q", name)
}

// LayerCount is the cost of one layer (all its repetitions).
type LayerCount struct {
	Layer    string          `json:"layer"`
	Protocol string          `json:"protocol"`
	Count    int             `json:"count"`
	Counters linear.Counters `json:"counters"`
}

// Count plans every layer of a network under a protocol and sums the
// counters. Layers with the same shape are planned once.
func Count(n Network, proto linear.Protocol, params cheetah.Parameters, opt linear.Options) (linear.Counters, []LayerCount, error) {
	var total linear.Counters
	per := make([]LayerCount, 0, len(n.Layers))
	cache := map[linear.ConvShape]linear.Counters{}
	for _, l := range n.Layers {
		c, ok := cache[l.Shape]
		if !ok {
			pl, err := linear.NewPlan(proto, params, l.Shape, opt)
			if err != nil {
				return total, nil, fmt.Errorf("nets: %s %s: %w", n.Name, l.Name, err)
			}
			c = pl.Counters
			cache[l.Shape] = c
		}
		lc := LayerCount{Layer: l.Name, Protocol: proto.String(), Count: l.Count}
		for i := 0; i < l.Count; i++ {
			lc.Counters.Add(c)
		}
		total.Add(lc.Counters)
		per = append(per, lc)
	}
	return total, per, nil
}

// PaperLayer is the ResNet-18 layer OptiPrime's protocol comparison uses
// (Co = Ci = 256, H = W = 14, 3×3, N = 8192).
func PaperLayer() Layer { return conv("resnet18.layer3.conv", 256, 14, 256, 3, 1, 1) }

// PaperOptions are the protocol options of the evaluation: t = 2^21 (the
// paper's plaintext modulus, W8A8 accumulators peak at 19.3 bits) and 8-bit
// weights, 40-bit statistical flooding.
var PaperOptions = linear.Options{LogT: 21, WeightBits: 8, Lambda: 40}

// Comparison is one network's totals per protocol.
type Comparison struct {
	Network string                     `json:"network"`
	LogN    int                        `json:"log_n"`
	Totals  map[string]linear.Counters `json:"totals"`
}

// Ratio returns protocol p's counter over Cheetah's for each counter.
func (c Comparison) Ratio(p linear.Protocol) map[string]float64 {
	a, b := c.Totals[p.String()], c.Totals[linear.Cheetah.String()]
	r := func(x, y int64) float64 {
		if y == 0 {
			return 0
		}
		return float64(x) / float64(y)
	}
	return map[string]float64{
		"output_cts":    r(a.OutputCts, b.OutputCts),
		"input_cts":     r(a.InputCts, b.InputCts),
		"automorphisms": r(a.Automorphisms, b.Automorphisms),
		"cpmults":       r(a.CPMults, b.CPMults),
		"bytes":         r(a.BytesC2S+a.BytesS2C, b.BytesC2S+b.BytesS2C),
	}
}

// Compare counts a network under all three protocols.
func Compare(n Network, params cheetah.Parameters, opt linear.Options) (Comparison, error) {
	c := Comparison{Network: n.Name, LogN: params.LogN(), Totals: map[string]linear.Counters{}}
	for _, p := range linear.Protocols {
		t, _, err := Count(n, p, params, opt)
		if err != nil {
			return c, err
		}
		c.Totals[p.String()] = t
	}
	return c, nil
}
