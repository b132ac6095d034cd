package linear

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// chiSquare16 returns Pearson's statistic of the top 4 bits of ℓ-bit values
// against the uniform distribution (15 degrees of freedom).
func chiSquare16(v []uint64, l int) float64 {
	var cnt [16]float64
	for _, x := range v {
		cnt[x>>uint(l-4)&15]++
	}
	exp := float64(len(v)) / 16
	s := 0.0
	for _, c := range cnt {
		s += (c - exp) * (c - exp) / exp
	}
	return s
}

// TestSharesUniform: with a fixed, highly structured input (all ones) and
// weights, both output shares are uniform mod 2^ℓ (the client's share is
// WX − R, the server's R + bias). The chi-square threshold 60 has a false
// alarm rate below 1e-6 for 15 degrees of freedom; a share leaking the
// constant output would score in the tens of thousands.
func TestSharesUniform(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN12)
	if err != nil {
		t.Fatal(err)
	}
	cli := NewClient(p)
	s := ConvShape{Ci: 2, H: 16, W: 16, Co: 8, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	l := 21
	for _, proto := range []Protocol{Cheetah, OptiEncode} {
		pl, err := NewPlan(proto, p, s, Options{LogT: l, WeightBits: 8})
		if err != nil {
			t.Fatal(err)
		}
		gks, err := cli.GaloisKeys(pl)
		if err != nil {
			t.Fatal(err)
		}
		ev := cheetah.NewEvaluator(p, cli.Keys.PK, gks)
		xc := make([]uint64, s.InputLen())
		xs := make([]uint64, s.InputLen())
		for i := range xc {
			xc[i] = 1
		}
		w := make([]uint64, s.WeightLen())
		for i := range w {
			w[i] = 3
		}
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
		if c := chiSquare16(clientShare, l); c > 60 {
			t.Errorf("%s: client share not uniform: χ² = %.1f over %d values", proto, c, len(clientShare))
		}
		if c := chiSquare16(serverShare, l); c > 60 {
			t.Errorf("%s: server share not uniform: χ² = %.1f over %d values", proto, c, len(serverShare))
		}
		// The statistic does detect the unmasked output.
		sum := make([]uint64, len(clientShare))
		for i := range sum {
			sum[i] = (clientShare[i] + serverShare[i]) & (1<<uint(l) - 1)
		}
		if c := chiSquare16(sum, l); c < 1000 {
			t.Errorf("%s: χ² of the reconstructed output only %.1f", proto, c)
		}
	}
}
