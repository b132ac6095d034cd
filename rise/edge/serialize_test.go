package edge

import (
	"bytes"
	"testing"
)

func TestKeyFilesRoundTrip(t *testing.T) {
	p, _ := Preset(1024)
	ctx, _ := NewContext(p)
	sk, pk, _ := ctx.GenKeys()
	sk2, err := ctx.UnmarshalSecretKey(ctx.MarshalSecretKey(sk))
	if err != nil {
		t.Fatal(err)
	}
	pk2, err := ctx.UnmarshalPublicKey(ctx.MarshalPublicKey(pk))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := NewEncryptor(ctx, pk2)
	dec, _ := NewDecryptor(ctx, sk2)
	ct := ctx.NewCiphertext()
	// Scale 2^23: the one 27-bit prime holds 4·2^23 with room, and a fresh
	// ciphertext's error (about 0.01 at 2^20) stays well under the bound.
	enc.Encrypt([]float64{3, 4}, 1<<23, ct)
	out := make([]float64, 2)
	dec.Decrypt(ct, out)
	if maxErr(out, []float64{3, 4}) > 1e-2 {
		t.Fatalf("keys from files do not round-trip: %v", out)
	}
	if _, err := ctx.UnmarshalSecretKey([]byte("RSK1")); err == nil {
		t.Fatal("truncated key accepted")
	}
}

func FuzzUnmarshalCiphertext(f *testing.F) {
	p := Params{Name: "fuzz", N: 16, Q: []uint64{134012929}, LogScale: 10}
	ctx, err := NewContext(p)
	if err != nil {
		f.Fatal(err)
	}
	_, pk, _ := ctx.GenKeys()
	enc, _ := NewEncryptor(ctx, pk)
	ct := ctx.NewCiphertext()
	enc.Encrypt([]float64{1, 2}, 1<<10, ct)
	good, _ := ctx.MarshalCiphertext(ct)
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte("RSC1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ct, err := ctx.UnmarshalCiphertext(b)
		if err != nil {
			return
		}
		b2, err := ctx.MarshalCiphertext(ct)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("accepted input does not re-encode identically")
		}
		ctx.UnmarshalSeeded(b)
	})
}

func FuzzUnmarshalKey(f *testing.F) {
	p := Params{Name: "fuzz", N: 16, Q: []uint64{134012929}, LogScale: 10}
	ctx, err := NewContext(p)
	if err != nil {
		f.Fatal(err)
	}
	sk, pk, _ := ctx.GenKeys()
	f.Add(ctx.MarshalSecretKey(sk))
	f.Add(ctx.MarshalPublicKey(pk))
	f.Add([]byte("RSK1\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if sk, err := ctx.UnmarshalSecretKey(b); err == nil {
			if !bytes.Equal(ctx.MarshalSecretKey(sk), b) {
				t.Fatal("accepted secret key does not re-encode identically")
			}
		}
		if pk, err := ctx.UnmarshalPublicKey(b); err == nil {
			if !bytes.Equal(ctx.MarshalPublicKey(pk), b) {
				t.Fatal("accepted public key does not re-encode identically")
			}
		}
	})
}
