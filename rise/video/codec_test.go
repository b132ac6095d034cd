package video

import (
	"bytes"
	"testing"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// The paper's ciphertext counts (section II-D): N=4096, log q=30 carries
// 61,440 bits per ciphertext, so QQVGA needs 3 and QVGA 10 ciphertexts.
func TestCodecCounts(t *testing.T) {
	p, _ := edge.Preset(4096)
	c, err := NewCodec(p)
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
	p16, _ := edge.Preset(16384)
	c16, _ := NewCodec(p16)
	if k := c16.CiphertextsPerFrame(QQVGAWidth, QQVGAHeight); k != 1 {
		t.Fatalf("N=16384 QQVGA needs %d ciphertexts, want 1", k)
	}
}

// Frames survive pack → encrypt → serialize → decrypt → unpack bit-exactly.
func TestFrameRoundTrip(t *testing.T) {
	for _, n := range []int{4096, 8192} {
		p, _ := edge.Preset(n)
		ctx, _ := edge.NewContext(p)
		sk, pk, err := ctx.GenKeys()
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := edge.NewEncryptor(ctx, pk)
		dec, _ := edge.NewDecryptor(ctx, sk)
		codec, _ := NewCodec(p)
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

// Every preset carries frames; the single-prime presets with fewer bits per
// slot. Bad arguments are errors, not panics.
func TestCodecAllPresets(t *testing.T) {
	want := map[int]int{1024: 5, 2048: 4, 4096: 30, 8192: 30, 16384: 30}
	for _, p := range edge.Presets {
		c, err := NewCodec(p)
		if err != nil {
			t.Fatal(err)
		}
		if c.BitsPerSlot != want[p.N] {
			t.Errorf("N=%d: %d bits per slot, want %d", p.N, c.BitsPerSlot, want[p.N])
		}
	}
	p, _ := edge.Preset(1024)
	ctx, _ := edge.NewContext(p)
	sk, pk, _ := ctx.GenKeys()
	enc, _ := edge.NewEncryptor(ctx, pk)
	dec, _ := edge.NewDecryptor(ctx, sk)
	c, _ := NewCodec(p)
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

// A seeded (symmetric) frame ciphertext round-trips through the wire format
// and the server expansion.
func TestSeededWire(t *testing.T) {
	p, _ := edge.Preset(4096)
	ctx, _ := edge.NewContext(p)
	sk, _, _ := ctx.GenKeys()
	enc, _ := edge.NewSymEncryptor(ctx, sk)
	dec, _ := edge.NewDecryptor(ctx, sk)
	codec, _ := NewCodec(p)
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
