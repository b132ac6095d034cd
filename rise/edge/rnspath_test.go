package edge

import (
	"math"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
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

// Seeded symmetric encryption on the rns paths equals the fly path's bit for
// bit (same secret randomness), over consecutive encryptions.
func TestRNSPathsSeededBitExact(t *testing.T) {
	p, _ := Preset(4096)
	ref, _ := NewContext(p, WithPath(PathFly))
	sk, _ := ref.genKeysFromSeed([SeedSize]byte{4, 5, 6})
	s := ref.ExportSecretKey(sk)
	vals := testValues(p.N / 2)
	run := func(ctx *Context, esk *SecretKey) []*SeededCiphertext {
		enc, err := NewSymEncryptor(ctx, esk)
		if err != nil {
			t.Fatal(err)
		}
		enc.prng = NewPRNG([SeedSize]byte{7}) // fixed secret randomness
		var out []*SeededCiphertext
		for range 3 {
			ct := ctx.NewSeededCiphertext()
			if err := enc.EncryptSeeded(vals, 1<<30, ct); err != nil {
				t.Fatal(err)
			}
			out = append(out, ct)
		}
		return out
	}
	want := run(ref, sk)
	for _, path := range []NTTPath{PathRNS, PathRNSShared} {
		ctx, _ := NewContext(p, WithPath(path))
		esk, err := ctx.ImportSecretKey(s, false)
		if err != nil {
			t.Fatal(err)
		}
		got := run(ctx, esk)
		for k := range got {
			if got[k].Seed != want[k].Seed {
				t.Fatalf("%s: ciphertext %d seed differs", path, k)
			}
			for i := range got[k].C0 {
				if !slices.Equal(got[k].C0[i], want[k].C0[i]) {
					t.Fatalf("%s: ciphertext %d limb %d differs from the fly path's", path, k, i)
				}
			}
		}
		// And it decrypts after server-side expansion.
		full, err := ctx.ExpandSeeded(got[2])
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := NewDecryptor(ctx, esk)
		out := make([]float64, len(vals))
		if err := dec.Decrypt(full, out); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(out, vals); e > 1e-3 {
			t.Fatalf("%s: seeded ciphertext decrypts with error %.3g", path, e)
		}
	}
}
