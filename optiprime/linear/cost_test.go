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

// TestOptiPrimeCheapestByMeasuredOps: on small layers where each layout
// wins once (Cheetah on an FC layer and on a 4-channel 64×64 convolution,
// the merge tree on 16→4 channels at 40×40, BSGS on 32 channels at 4×4),
// every layout is run for real and its cost taken from what was measured —
// the evaluator's own count of products and automorphisms, the messages
// and bytes actually sent. The layout OptiPrime chose from its plans costs
// the least by those measurements, and every run's output is exact.
func TestOptiPrimeCheapestByMeasuredOps(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{LogT: 37, WeightBits: 8}
	cli := NewClient(p)
	for _, c := range []struct {
		shape ConvShape
		want  string
	}{
		{ConvShape{Ci: 64, H: 1, W: 1, Co: 16, Kh: 1, Kw: 1, Stride: 1}, "cheetah"},
		{ConvShape{Ci: 4, H: 64, W: 64, Co: 4, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, "cheetah"},
		{ConvShape{Ci: 16, H: 40, W: 40, Co: 4, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, "optiencode"},
		{ConvShape{Ci: 32, H: 4, W: 4, Co: 32, Kh: 3, Kw: 3, Stride: 1, Pad: 1}, "optiencode-bsgs"},
	} {
		chosen, err := NewPlan(OptiPrime, p, c.shape, opt)
		if err != nil {
			t.Fatal(err)
		}
		if chosen.Variant() != c.want {
			t.Errorf("%+v: chose %s, want %s", c.shape, chosen.Variant(), c.want)
		}
		measured := map[string]float64{}
		for _, proto := range Protocols {
			pl, err := NewPlan(proto, p, c.shape, opt)
			if err != nil {
				t.Fatal(err)
			}
			m := measureRun(t, cli, pl)
			measured[pl.Variant()] = pl.costOf(m)
			t.Logf("%+v %s: measured %+v, cost %.4f s", c.shape, pl.Variant(), m, measured[pl.Variant()])
		}
		for v, cost := range measured {
			if cost < measured[chosen.Variant()] {
				t.Errorf("%+v: %s measures %.4f s, less than the chosen %s's %.4f s", c.shape, v, cost, chosen.Variant(), measured[chosen.Variant()])
			}
		}
	}
}

// measureRun runs pl on random shares and returns what the run did: the
// evaluator's products and automorphisms, the messages and bytes each way.
// The output must equal the reference convolution.
func measureRun(t *testing.T, cli *Client, pl *Plan) Counters {
	t.Helper()
	s, l := pl.Shape, pl.Opt.LogT
	x, xc := randVec(t, s.InputLen(), l), randVec(t, s.InputLen(), l)
	xs := make([]uint64, len(x))
	for i := range x {
		xs[i] = (x[i] - xc[i]) & (1<<uint(l) - 1)
	}
	w := randWeights(t, s.WeightLen(), pl.Opt.WeightBits, l)
	gks, err := cli.GaloisKeys(pl)
	if err != nil {
		t.Fatal(err)
	}
	ev := cheetah.NewEvaluator(cli.Params, cli.Keys.PK, gks)
	in, err := pl.EncryptInput(cli, xc)
	if err != nil {
		t.Fatal(err)
	}
	out, serverShare, err := pl.Evaluate(ev, w, nil, xs, in)
	if err != nil {
		t.Fatal(err)
	}
	clientShare, err := pl.DecryptOutput(cli, out)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range refConv(s, x, w, nil, l) {
		if got := (clientShare[i] + serverShare[i]) & (1<<uint(l) - 1); got != want {
			t.Fatalf("%s %+v: output %d = %d, want %d", pl.Variant(), s, i, got, want)
		}
	}
	ops := ev.Ops()
	m := Counters{CPMults: ops.MulPlain, Automorphisms: ops.Automorphisms, InputCts: int64(len(in)), OutputCts: int64(len(out))}
	for _, b := range in {
		m.BytesC2S += int64(len(b))
	}
	for _, b := range out {
		m.BytesS2C += int64(len(b))
	}
	return m
}
