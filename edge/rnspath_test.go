package edge

import (
	"math"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/rns"
)

// The rns paths compute the very ciphertexts of the on-the-fly (RISE) path:
// with the same seed and key, every limb of c0 and c1 is bit-identical, over
// several encryptions in a row (the PathRNS table is refilled per limb), and
// decryption gives the same slots. Run on the fast kernels and on rns's Go
// fallback.
func TestRNSPathsBitExact(t *testing.T) {
	for _, pure := range []bool{false, true} {
		name := "fast"
		if pure {
			name = "purego"
		}
		t.Run(name, func(t *testing.T) {
			rns.SetPureGo(pure)
			defer rns.SetPureGo(false)
			for _, n := range []int{1024, 4096, 8192} {
				testRNSPathsBitExact(t, n)
			}
		})
	}
}

func testRNSPathsBitExact(t *testing.T, n int) {
	p, _ := Preset(n)
	ref, err := NewContext(p, WithPath(PathFly))
	if err != nil {
		t.Fatal(err)
	}
	sk, pk := ref.genKeysFromSeed([SeedSize]byte{1, 2, 3})
	pk0, pk1 := ref.ExportPublicKey(pk)
	s := ref.ExportSecretKey(sk)
	seed := [SeedSize]byte{9, 8, 7}
	vals := testValues(n / 2)
	scale := math.Exp2(float64(p.LogScale))
	encryptAll := func(ctx *Context, epk *PublicKey, esk *SecretKey) ([]*Ciphertext, [][]float64) {
		enc, err := NewEncryptorSeed(ctx, epk, seed)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := NewDecryptor(ctx, esk)
		if err != nil {
			t.Fatal(err)
		}
		var cts []*Ciphertext
		var outs [][]float64
		for range 3 {
			ct := ctx.NewCiphertext()
			if err := enc.Encrypt(vals, scale, ct); err != nil {
				t.Fatal(err)
			}
			out := make([]float64, len(vals))
			if err := dec.Decrypt(ct, out); err != nil {
				t.Fatal(err)
			}
			if e := maxErr(out, vals); e > 1e-2 {
				t.Fatalf("N=%d %s: decryption error %.3g", n, ctx.Path(), e)
			}
			cts, outs = append(cts, ct), append(outs, out)
		}
		return cts, outs
	}
	wantCts, wantOuts := encryptAll(ref, pk, sk)
	for _, path := range []NTTPath{PathRNS, PathRNSShared} {
		ctx, err := NewContext(p, WithPath(path))
		if err != nil {
			t.Fatal(err)
		}
		if ctx.Path() != path {
			t.Fatalf("context path %s, want %s", ctx.Path(), path)
		}
		epk, err := ctx.ImportPublicKey(pk0, pk1, false)
		if err != nil {
			t.Fatal(err)
		}
		esk, err := ctx.ImportSecretKey(s, false)
		if err != nil {
			t.Fatal(err)
		}
		cts, outs := encryptAll(ctx, epk, esk)
		for k := range cts {
			for i := range cts[k].C0 {
				if !slices.Equal(cts[k].C0[i], wantCts[k].C0[i]) || !slices.Equal(cts[k].C1[i], wantCts[k].C1[i]) {
					t.Fatalf("N=%d %s: ciphertext %d limb %d differs from the fly path's", n, path, k, i)
				}
			}
			if !slices.Equal(outs[k], wantOuts[k]) {
				t.Fatalf("N=%d %s: decryption %d differs from the fly path's", n, path, k)
			}
		}
		// The key round-trips through the 64-bit multiplication form.
		e0, e1 := ctx.ExportPublicKey(epk)
		for i := range e0 {
			if !slices.Equal(e0[i], pk0[i]) || !slices.Equal(e1[i], pk1[i]) {
				t.Fatalf("N=%d %s: exported public key limb %d differs", n, path, i)
			}
		}
	}
}

func TestPathSelection(t *testing.T) {
	p, _ := Preset(4096)
	if _, err := NewContext(p, WithPath("bogus")); err == nil {
		t.Error("unknown path accepted")
	}
	ctx, err := NewContext(p)
	if err != nil {
		t.Fatal(err)
	}
	want := PathFly
	if rns.LeanNTTSupported(p.Q[0]) {
		want = PathRNS
	}
	if ctx.Path() != want || DefaultPath(p) != want {
		t.Fatalf("default path %s (DefaultPath %s), want %s", ctx.Path(), DefaultPath(p), want)
	}
	if c, _ := NewContext(p, WithTableNTT()); c.Path() != PathTable {
		t.Fatalf("WithTableNTT gives path %s", c.Path())
	}
	// Primes ≥ 2^50 have no lean rns table.
	big := Params{N: 1024, Q: []uint64{1152921504606830593}, LogScale: 40}
	if DefaultPath(big) != PathFly {
		t.Error("DefaultPath picks rns for a 60-bit prime")
	}
	if _, err := NewContext(big, WithPath(PathRNS)); err == nil {
		t.Error("PathRNS accepted a 60-bit prime")
	}
}
