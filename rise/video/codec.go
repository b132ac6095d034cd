package video

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// Codec packs frames into CKKS real slots, BitsPerSlot bits per slot
// (the paper's N/2·log q bits per ciphertext, section II-D), and restores
// them exactly after decryption.
type Codec struct {
	Slots       int // N/2
	BitsPerSlot int
	Scale       float64
}

// frameLogScale returns the scale used for frames at ring degree n: the
// standard deviation of fresh encryption noise in a slot is about
// σ·sqrt(4N/3)·sqrt(N) (e0 + e·u + e1·s with σ² = 10.5, then the
// embedding's sum over N coefficients); Δ is 2^7 times that, so a slot's
// noise stays below 2^-7 units (the decoder tolerates 0.25 = 32σ).
func frameLogScale(n int) int {
	sd := math.Sqrt(edge.BinomialK/2.0) * math.Sqrt(4*float64(n)/3) * math.Sqrt(float64(n))
	return int(math.Ceil(math.Log2(sd))) + 7
}

// NewCodec chooses the packing for the context: bits per slot is
// round(log2 q0) (30 for the 30-bit presets), capped so that 2^bits·Δ stays
// 2 bits below Q (the single-prime N = 1024 and 2048 presets carry 5 and 4
// bits per slot).
func NewCodec(p edge.Params) (*Codec, error) {
	if p.N < 16 || len(p.Q) == 0 {
		return nil, fmt.Errorf("video: frame codec: bad parameters (N=%d, %d primes)", p.N, len(p.Q))
	}
	ls := frameLogScale(p.N)
	b := int(math.Round(math.Log2(float64(p.Q[0]))))
	if lim := int(math.Floor(p.LogQ())) - ls - 2; b > lim {
		b = lim
	}
	if lim := 61 - ls - 1; b > lim { // encoder bound |coefficient| < 2^61
		b = lim
	}
	if b < 1 {
		return nil, fmt.Errorf("video: log Q = %.1f too small to carry frames at scale 2^%d", p.LogQ(), ls)
	}
	return &Codec{Slots: p.N / 2, BitsPerSlot: b, Scale: math.Exp2(float64(ls))}, nil
}

// BitsPerCiphertext is N/2 · BitsPerSlot.
func (c *Codec) BitsPerCiphertext() int { return c.Slots * c.BitsPerSlot }

// CiphertextsPerFrame is the number of ciphertexts one w×h frame needs.
func (c *Codec) CiphertextsPerFrame(w, h int) int {
	bitsTotal := 8 * w * h
	return (bitsTotal + c.BitsPerCiphertext() - 1) / c.BitsPerCiphertext()
}

// Pack writes the slot values of ciphertext number k of frame f into out
// (len ≥ Slots): slot i carries bits [(k·Slots+i)·b, +b) of the frame's bit
// stream (little-endian bit order). Slots past the end are zero.
func (c *Codec) Pack(f Frame, k int, out []float64) error {
	if len(out) < c.Slots || k < 0 || k >= c.CiphertextsPerFrame(f.W, f.H) || len(f.Pix) != f.W*f.H {
		return fmt.Errorf("video: pack: ciphertext %d of a %dx%d frame (%d bytes) into %d slots", k, f.W, f.H, len(f.Pix), len(out))
	}
	b := c.BitsPerSlot
	base := k * c.Slots * b
	nbits := 8 * len(f.Pix)
	for i := 0; i < c.Slots; i++ {
		var v uint64
		start := base + i*b
		for j := 0; j < b && start+j < nbits; j++ {
			bit := (f.Pix[(start+j)>>3] >> ((start + j) & 7)) & 1
			v |= uint64(bit) << j
		}
		out[i] = float64(v)
	}
	return nil
}

// Unpack writes the decrypted slot values of ciphertext k back into f,
// rounding each slot to the nearest integer. It returns an error if a slot
// is not within 0.25 of an integer in range (a sign of wrong keys or too
// much noise).
func (c *Codec) Unpack(slots []float64, k int, f Frame) error {
	if len(slots) < c.Slots || k < 0 || k >= c.CiphertextsPerFrame(f.W, f.H) || len(f.Pix) != f.W*f.H {
		return fmt.Errorf("video: unpack: ciphertext %d of a %dx%d frame (%d bytes) from %d slots", k, f.W, f.H, len(f.Pix), len(slots))
	}
	b := c.BitsPerSlot
	base := k * c.Slots * b
	nbits := 8 * len(f.Pix)
	lim := float64(uint64(1) << b)
	for i := 0; i < c.Slots && base+i*b < nbits; i++ {
		x := slots[i]
		r := math.Round(x)
		if math.Abs(x-r) > 0.25 || r < 0 || r >= lim {
			return fmt.Errorf("video: ciphertext %d slot %d decrypts to %g, not a %d-bit integer", k, i, x, b)
		}
		v := uint64(r)
		start := base + i*b
		for j := 0; j < b && start+j < nbits; j++ {
			p := start + j
			f.Pix[p>>3] = f.Pix[p>>3]&^(1<<(p&7)) | byte((v>>j)&1)<<(p&7)
		}
	}
	return nil
}
