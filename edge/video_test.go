package edge

import (
	"bytes"
	"io"
	"testing"
)

// The paper's ciphertext counts (section II-D): N=4096, log q=30 carries
// 61,440 bits per ciphertext, so QQVGA needs 3 and QVGA 10 ciphertexts.
func TestFrameCodecCounts(t *testing.T) {
	p, _ := Preset(4096)
	c, err := NewFrameCodec(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.BitsPerSlot != 30 || c.BitsPerCiphertext() != 61440 {
		t.Fatalf("bits per slot %d, per ciphertext %d", c.BitsPerSlot, c.BitsPerCiphertext())
	}
	if k := c.CiphertextsPerFrame(QQVGAWidth, QQVGAHeight); k != 3 {
		t.Fatalf("QQVGA needs %d ciphertexts, want 3", k)
	}
	if k := c.CiphertextsPerFrame(QVGAWidth, QVGAHeight); k != 10 {
		t.Fatalf("QVGA needs %d ciphertexts, want 10", k)
	}
	p16, _ := Preset(16384)
	c16, _ := NewFrameCodec(p16)
	if k := c16.CiphertextsPerFrame(QQVGAWidth, QQVGAHeight); k != 1 {
		t.Fatalf("N=16384 QQVGA needs %d ciphertexts, want 1", k)
	}
}

// Frames survive pack → encrypt → serialize → decrypt → unpack bit-exactly.
func TestFrameRoundTrip(t *testing.T) {
	for _, n := range []int{4096, 8192} {
		p, _ := Preset(n)
		ctx, _ := NewContext(p)
		sk, pk, err := ctx.GenKeys()
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := NewEncryptor(ctx, pk)
		dec, _ := NewDecryptor(ctx, sk)
		codec, _ := NewFrameCodec(p)
		slots := make([]float64, codec.Slots)
		ct := ctx.NewCiphertext()
		for fi := 0; fi < 2; fi++ {
			f := SyntheticFrame(QQVGAWidth, QQVGAHeight, fi)
			got := Frame{W: f.W, H: f.H, Pix: make([]byte, len(f.Pix))}
			for k := 0; k < codec.CiphertextsPerFrame(f.W, f.H); k++ {
				if err := codec.Pack(f, k, slots); err != nil {
					t.Fatal(err)
				}
				if err := enc.Encrypt(slots, codec.Scale, ct); err != nil {
					t.Fatal(err)
				}
				b, err := ctx.MarshalCiphertext(ct)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != ctx.CiphertextSize() {
					t.Fatalf("encoded size %d, want %d", len(b), ctx.CiphertextSize())
				}
				ct2, err := ctx.UnmarshalCiphertext(b)
				if err != nil {
					t.Fatal(err)
				}
				if err := dec.Decrypt(ct2, slots); err != nil {
					t.Fatal(err)
				}
				if err := codec.Unpack(slots, k, got); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got.Pix, f.Pix) {
				t.Fatalf("N=%d frame %d not restored exactly", n, fi)
			}
		}
	}
}

// A seeded (symmetric) frame ciphertext round-trips through the wire format
// and the server expansion.
func TestSeededWire(t *testing.T) {
	p, _ := Preset(4096)
	ctx, _ := NewContext(p)
	sk, _, _ := ctx.GenKeys()
	enc, _ := NewSymEncryptor(ctx, sk)
	dec, _ := NewDecryptor(ctx, sk)
	codec, _ := NewFrameCodec(p)
	f := SyntheticFrame(QQVGAWidth, QQVGAHeight, 5)
	slots := make([]float64, codec.Slots)
	if err := codec.Pack(f, 1, slots); err != nil {
		t.Fatal(err)
	}
	sct := ctx.NewSeededCiphertext()
	if err := enc.EncryptSeeded(slots, codec.Scale, sct); err != nil {
		t.Fatal(err)
	}
	b, _ := ctx.MarshalSeeded(sct)
	if len(b) >= ctx.CiphertextSize()/2+200 {
		t.Fatalf("seeded ciphertext %d bytes is not about half of %d", len(b), ctx.CiphertextSize())
	}
	sct2, err := ctx.UnmarshalSeeded(b)
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := ctx.ExpandSeeded(sct2)
	out := make([]float64, codec.Slots)
	dec.Decrypt(ct, out)
	got := Frame{W: f.W, H: f.H, Pix: make([]byte, len(f.Pix))}
	if err := codec.Unpack(out, 1, got); err != nil {
		t.Fatal(err)
	}
	lo, hi := codec.BitsPerCiphertext()/8, 2*codec.BitsPerCiphertext()/8
	if !bytes.Equal(got.Pix[lo+1:hi-1], f.Pix[lo+1:hi-1]) {
		t.Fatal("seeded frame chunk not restored")
	}
}

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
	enc.Encrypt([]float64{3, 4}, 1<<20, ct)
	out := make([]float64, 2)
	dec.Decrypt(ct, out)
	if maxErr(out, []float64{3, 4}) > 1e-2 {
		t.Fatalf("keys from files do not round-trip: %v", out)
	}
	if _, err := ctx.UnmarshalSecretKey([]byte("RSK1")); err == nil {
		t.Fatal("truncated key accepted")
	}
}

func TestY4MRoundTrip(t *testing.T) {
	frames := []Frame{SyntheticFrame(16, 8, 0), SyntheticFrame(16, 8, 1)}
	var buf bytes.Buffer
	if err := WriteY4M(&buf, frames); err != nil {
		t.Fatal(err)
	}
	r, err := NewY4MReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Pix, frames[i].Pix) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	// A 4:2:0 stream: the chroma planes are skipped.
	var s bytes.Buffer
	s.WriteString("YUV4MPEG2 W4 H2 F25:1 C420jpeg\nFRAME\n")
	s.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8, 128, 128, 128, 128})
	s.WriteString("FRAME\n")
	s.Write([]byte{9, 9, 9, 9, 9, 9, 9, 9, 128, 128, 128, 128})
	r, err = NewY4MReader(&s)
	if err != nil {
		t.Fatal(err)
	}
	f0, _ := r.Next()
	f1, err := r.Next()
	if err != nil || f0.Pix[7] != 8 || f1.Pix[0] != 9 {
		t.Fatalf("4:2:0 parse: %v %v %v", f0.Pix, f1.Pix, err)
	}
}

func FuzzY4M(f *testing.F) {
	f.Add([]byte("YUV4MPEG2 W4 H2 F25:1 C420jpeg\nFRAME\n\x01\x02\x03\x04\x05\x06\x07\x08\x80\x80\x80\x80"))
	f.Add([]byte("YUV4MPEG2 W2 H2 Cmono\nFRAME\nabcd"))
	f.Add([]byte("YUV4MPEG2 W99999999 H2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewY4MReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := 0; i < 4; i++ {
			fr, err := r.Next()
			if err != nil {
				return
			}
			if len(fr.Pix) != r.W*r.H {
				t.Fatalf("frame of %d bytes for %dx%d", len(fr.Pix), r.W, r.H)
			}
		}
	})
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

// Every preset carries frames; the single-prime presets with fewer bits per
// slot. Bad arguments are errors, not panics.
func TestFrameCodecAllPresets(t *testing.T) {
	want := map[int]int{1024: 5, 2048: 4, 4096: 30, 8192: 30, 16384: 30}
	for _, p := range Presets {
		c, err := NewFrameCodec(p)
		if err != nil {
			t.Fatal(err)
		}
		if c.BitsPerSlot != want[p.N] {
			t.Errorf("N=%d: %d bits per slot, want %d", p.N, c.BitsPerSlot, want[p.N])
		}
	}
	p, _ := Preset(1024)
	ctx, _ := NewContext(p)
	sk, pk, _ := ctx.GenKeys()
	enc, _ := NewEncryptor(ctx, pk)
	dec, _ := NewDecryptor(ctx, sk)
	c, _ := NewFrameCodec(p)
	f := SyntheticFrame(40, 30, 2)
	got := Frame{W: 40, H: 30, Pix: make([]byte, 1200)}
	slots := make([]float64, c.Slots)
	ct := ctx.NewCiphertext()
	for k := 0; k < c.CiphertextsPerFrame(40, 30); k++ {
		if err := c.Pack(f, k, slots); err != nil {
			t.Fatal(err)
		}
		enc.Encrypt(slots, c.Scale, ct)
		dec.Decrypt(ct, slots)
		if err := c.Unpack(slots, k, got); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Pix, f.Pix) {
		t.Fatal("N=1024 frame not restored")
	}
	if c.Pack(f, 0, slots[:3]) == nil || c.Pack(f, 99, slots) == nil || c.Unpack(slots[:1], 0, got) == nil {
		t.Fatal("bad pack/unpack arguments accepted")
	}
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
