package nets

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

func TestShapes(t *testing.T) {
	want := map[string]int{"resnet18": 21, "resnet50": 54, "vgg16": 16, "mobilenetv2": 53, "bert-base-128": 4}
	for _, n := range All() {
		if len(n.Layers) != want[n.Name] {
			t.Errorf("%s: %d layers, want %d", n.Name, len(n.Layers), want[n.Name])
		}
		for _, l := range n.Layers {
			if err := l.Shape.Validate(); err != nil {
				t.Errorf("%s %s: %v", n.Name, l.Name, err)
			}
		}
	}
	// Spatial sizes chain: the last convolutions of the CNNs are 7×7 (14×14 in, stride 2 for the 7×7 ones).
	r18 := ResNet18().Layers
	if last := r18[len(r18)-2].Shape; last.H != 7 || last.Ci != 512 || last.OutH() != 7 {
		t.Errorf("resnet18 last conv %+v", last)
	}
	r50 := ResNet50().Layers
	if last := r50[len(r50)-2].Shape; last.H != 7 || last.Co != 2048 {
		t.Errorf("resnet50 last conv %+v", last)
	}
	mb := MobileNetV2().Layers
	if last := mb[len(mb)-2].Shape; last.H != 7 || last.Co != 1280 {
		t.Errorf("mobilenetv2 last conv %+v", last)
	}
	// Parameter count of the ResNet-18 linear layers (11.69 M incl. BN ≈ 11.68 M conv+fc weights).
	var params int
	for _, l := range r18 {
		params += l.Shape.WeightLen()
	}
	if params < 11_600_000 || params > 11_700_000 {
		t.Errorf("resnet18 has %d weights", params)
	}
}

// TestPaperClaims checks OptiPrime's protocol claims on the paper's
// ResNet-18 layer and on every network at N = 8192: OptiEncode sends fewer
// output ciphertexts and fewer bytes than Cheetah, and BSGS needs fewer
// automorphisms than OptiEncode. The ratios are logged next to the paper's.
func TestPaperClaims(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	layer := Network{Name: "resnet18-layer", Layers: []Layer{PaperLayer()}}
	for _, n := range append([]Network{layer}, All()...) {
		c, err := Compare(n, p, PaperOptions)
		if err != nil {
			t.Fatal(err)
		}
		ch := c.Totals[linear.Cheetah.String()]
		oe := c.Totals[linear.OptiEncode.String()]
		bs := c.Totals[linear.OptiEncodeBSGS.String()]
		if oe.OutputCts >= ch.OutputCts {
			t.Errorf("%s: optiencode %d output cts, cheetah %d", n.Name, oe.OutputCts, ch.OutputCts)
		}
		if oe.BytesC2S+oe.BytesS2C >= ch.BytesC2S+ch.BytesS2C {
			t.Errorf("%s: optiencode %d bytes, cheetah %d", n.Name, oe.BytesC2S+oe.BytesS2C, ch.BytesC2S+ch.BytesS2C)
		}
		if bs.Automorphisms >= oe.Automorphisms {
			t.Errorf("%s: bsgs %d automorphisms, optiencode %d", n.Name, bs.Automorphisms, oe.Automorphisms)
		}
		if bs.OutputCts != oe.OutputCts || bs.BytesS2C != oe.BytesS2C {
			t.Errorf("%s: bsgs changed communication: %+v vs %+v", n.Name, bs, oe)
		}
		r := c.Ratio(linear.OptiEncode)
		t.Logf("%-14s cheetah %+v", n.Name, ch)
		t.Logf("%-14s optiencode/cheetah: output cts %.3fx (paper 0.07-0.46x), bytes %.3fx (paper 0.11-0.59x); bsgs/optiencode automorphisms %.3fx",
			n.Name, r["output_cts"], r["bytes"], float64(bs.Automorphisms)/float64(oe.Automorphisms))
	}
}

func TestPaperLayerExact(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	// The layout is fully determined: 16×16 padded plane, 32 channels per
	// ciphertext (32·256 = 8192), 8 input ciphertexts; Cheetah returns one
	// ciphertext per output channel, OptiEncode packs 32 channels per
	// ciphertext with 31 automorphisms each, BSGS uses B = 4:
	// 8·(4−1) baby + 8·(32/4−1) giant = 80.
	want := map[linear.Protocol]linear.Counters{
		linear.Cheetah:        {OutputCts: 256, InputCts: 8, Automorphisms: 0, CPMults: 2048},
		linear.OptiEncode:     {OutputCts: 8, InputCts: 8, Automorphisms: 248, CPMults: 2048},
		linear.OptiEncodeBSGS: {OutputCts: 8, InputCts: 8, Automorphisms: 80, CPMults: 2048},
	}
	for proto, w := range want {
		pl, err := linear.NewPlan(proto, p, PaperLayer().Shape, PaperOptions)
		if err != nil {
			t.Fatal(err)
		}
		c := pl.Counters
		c.BytesC2S, c.BytesS2C = 0, 0
		if c != w {
			t.Errorf("%s: %+v, want %+v", proto, c, w)
		}
		if pl.Counters.BytesC2S != 8*int64(p.InputSize()) {
			t.Errorf("%s: %d bytes up, want 8 input ciphertexts of %d", proto, pl.Counters.BytesC2S, p.InputSize())
		}
	}
}

// TestSweepN repeats the comparison for ResNet-18 over the ring degrees of
// the paper's parameter sweep (N = 4096 … 32768). At N = 4096 (109-bit
// modulus, no special prime) BSGS's baby steps do not fit the flooding
// budget and the layers keep the merge tree, so BSGS only ties there.
func TestSweepN(t *testing.T) {
	for logN := 12; logN <= 15; logN++ {
		lit, err := cheetah.PresetForLogN(logN)
		if err != nil {
			t.Fatal(err)
		}
		p, err := cheetah.NewParameters(lit)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Compare(ResNet18(), p, PaperOptions)
		if err != nil {
			t.Fatal(err)
		}
		ch, oe, bs := c.Totals["cheetah"], c.Totals["optiencode"], c.Totals["optiencode-bsgs"]
		if oe.OutputCts >= ch.OutputCts || oe.BytesC2S+oe.BytesS2C >= ch.BytesC2S+ch.BytesS2C {
			t.Errorf("N=2^%d: optiencode %+v not below cheetah %+v", logN, oe, ch)
		}
		if bs.Automorphisms > oe.Automorphisms || (logN >= 13 && bs.Automorphisms >= oe.Automorphisms) {
			t.Errorf("N=2^%d: bsgs %d automorphisms, optiencode %d", logN, bs.Automorphisms, oe.Automorphisms)
		}
		r := c.Ratio(linear.OptiEncode)
		t.Logf("N=2^%d resnet18: optiencode/cheetah output cts %.3f bytes %.3f; bsgs/optiencode automorphisms %.3f",
			logN, r["output_cts"], r["bytes"], float64(bs.Automorphisms)/float64(oe.Automorphisms))
	}
}
