package fhetest

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// Encode/Encrypt then Decrypt give the slots back, zero-padded, at the top
// level and below it, for real and complex values.
func TestRoundTrip(t *testing.T) {
	c := NewCKKS(t, "insecure-test")
	if c.Preset.Name != "insecure-test" || c.Params.LogN() != c.Preset.LogN || c.Params.MaxLevel() != c.Preset.Levels() {
		t.Fatalf("preset %s gave logN=%d, %d levels", c.Preset.Name, c.Params.LogN(), c.Params.MaxLevel())
	}
	v := []float64{0.5, -0.25, 1, 0, 0.125}
	for _, level := range []int{c.Params.MaxLevel(), 1} {
		ct := c.Encrypt(t, c.Encode(t, v, level))
		if ct.Level() != level {
			t.Fatalf("ciphertext at level %d, want %d", ct.Level(), level)
		}
		got := c.Decrypt(t, ct)
		if len(got) != c.Params.MaxSlots() {
			t.Fatalf("%d slots, want %d", len(got), c.Params.MaxSlots())
		}
		for i, x := range got {
			want := 0.0
			if i < len(v) {
				want = v[i]
			}
			if math.Abs(x-want) > 1e-6 {
				t.Fatalf("level %d slot %d: %g, want %g", level, i, x, want)
			}
		}
	}
	z := []complex128{complex(0.5, -0.5), complex(0, 0.75)}
	got := c.DecryptComplex(t, c.Encrypt(t, c.EncodeComplex(t, z, c.Params.MaxLevel())))
	for i, x := range got {
		var want complex128
		if i < len(z) {
			want = z[i]
		}
		if cmplx.Abs(x-want) > 1e-6 {
			t.Fatalf("complex slot %d: %v, want %v", i, x, want)
		}
	}
}

// A Galois key from AddGaloisKeys rotates correctly, the relinearisation
// key relinearises a product, and asking again for a key reuses it.
func TestEvaluationKeys(t *testing.T) {
	c := NewCKKS(t, "insecure-test")
	g := c.Params.GaloisElement(3)
	c.AddGaloisKeys(g, g)
	gk := c.Galois[g]
	if len(c.Galois) != 1 || gk == nil {
		t.Fatalf("%d Galois keys", len(c.Galois))
	}
	c.AddGaloisKeys(g)
	if c.Galois[g] != gk {
		t.Fatal("AddGaloisKeys replaced a key it already had")
	}
	n := c.Params.MaxSlots()
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(float64(i))
	}
	eval := ckks.NewEvaluator(c.Params, rlwe.NewMemEvaluationKeySet(c.Relin, gk))
	ct := c.Encrypt(t, c.Encode(t, v, c.Params.MaxLevel()))
	rot, err := eval.RotateNew(ct, 3)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := eval.MulRelinNew(ct, ct)
	if err != nil {
		t.Fatal(err)
	}
	if err := eval.Rescale(sq, sq); err != nil {
		t.Fatal(err)
	}
	gotRot, gotSq := c.Decrypt(t, rot), c.Decrypt(t, sq)
	for i := range v {
		if w := v[(i+3)%n]; math.Abs(gotRot[i]-w) > 1e-5 {
			t.Fatalf("rotated slot %d: %g, want %g", i, gotRot[i], w)
		}
		if w := v[i] * v[i]; math.Abs(gotSq[i]-w) > 1e-5 {
			t.Fatalf("squared slot %d: %g, want %g", i, gotSq[i], w)
		}
	}
}
