package linear

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// TestOptiPrimeChoosesPerLayer: the per-layer choice returns, for each
// layer, the plan of least Cost among the layouts — BSGS on the paper's
// ResNet-18 layer, Cheetah's matrix-vector packing on ResNet's FC layer —
// and a layer it plans computes the exact convolution.
func TestOptiPrimeChoosesPerLayer(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{LogT: 37, WeightBits: 8}
	for _, c := range []struct {
		name  string
		shape ConvShape
		want  string
	}{
		{"paper layer", ConvShape{Ci: 256, H: 14, W: 14, Co: 256, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, "optiencode-bsgs"},
		{"fc 512→1000", ConvShape{Ci: 512, H: 1, W: 1, Co: 1000, Kh: 1, Kw: 1, Stride: 1}, "cheetah"},
	} {
		pl, err := NewPlan(OptiPrime, p, c.shape, opt)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Variant() != c.want {
			t.Errorf("%s: chose %s (cost %.3f s), want %s", c.name, pl.Variant(), pl.Cost(), c.want)
		}
		for _, proto := range Protocols {
			other, err := NewPlan(proto, p, c.shape, opt)
			if err != nil {
				continue
			}
			if other.Cost() < pl.Cost() {
				t.Errorf("%s: %s costs %.3f s, less than the chosen %s's %.3f s", c.name, proto, other.Cost(), pl.Variant(), pl.Cost())
			}
			t.Logf("%s: %s %.3f s %+v", c.name, proto, other.Cost(), other.Counters)
		}
	}
	cli := NewClient(p)
	runProtocol(t, protoCase{name: "optiprime small layer", proto: OptiPrime, shape: ConvShape{Ci: 16, H: 8, W: 8, Co: 16, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, opt: Options{LogT: 37, WeightBits: 8}}, cli)
}

// TestBSGSKernelTermsSame: BSGS plaintexts built from the kernels' terms
// listed ahead (as PrepareWeights does) equal those built term by term.
func TestBSGSKernelTermsSame(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []ConvShape{
		{Ci: 64, H: 14, W: 14, Co: 48, Kh: 3, Kw: 3, Stride: 1, Pad: 1},
		{Ci: 32, H: 15, W: 15, Co: 64, Kh: 3, Kw: 3, Stride: 2, Pad: 1},
		{Ci: 128, H: 7, W: 7, Co: 256, Kh: 1, Kw: 1, Stride: 1},
	} {
		pl, err := NewPlan(OptiEncodeBSGS, p, s, Options{LogT: 37, WeightBits: 8})
		if err != nil {
			t.Fatal(err)
		}
		if !pl.BSGS {
			t.Fatalf("%+v: no BSGS split", s)
		}
		w := randWeights(t, s.WeightLen(), 8, 37)
		terms := pl.kernelTerms(w)
		for _, ref := range pl.plainRefs() {
			got, want := pl.plainPolyTerms(w, terms, ref), pl.plainPoly(w, ref)
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("%+v %+v: coefficient %d = %d, want %d", s, ref, j, got[j], want[j])
				}
			}
		}
	}
}
