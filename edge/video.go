package edge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Frame is one 8-bit grayscale picture, row-major.
type Frame struct {
	W, H int
	Pix  []byte
}

// Standard resolutions of the paper's evaluation.
const (
	QQVGAWidth, QQVGAHeight = 160, 120
	QVGAWidth, QVGAHeight   = 320, 240
)

// SyntheticFrame draws frame t of a deterministic test sequence: a moving
// diagonal gradient with a bright disc and a noise-like texture, so every
// byte value and bit position occurs.
func SyntheticFrame(w, h, t int) Frame {
	f := Frame{W: w, H: h, Pix: make([]byte, w*h)}
	cx, cy := (w/2+3*t)%w, (h/2+2*t)%h
	r2 := (min(w, h) / 5) * (min(w, h) / 5)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := (x + y + 4*t) * 255 / (w + h)
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) < r2 {
				v = 255 - v/4
			}
			v ^= (x * 31 * (y + t)) & 7
			f.Pix[y*w+x] = byte(v)
		}
	}
	return f
}

// FrameCodec packs frames into CKKS real slots, BitsPerSlot bits per slot
// (the paper's N/2·log q bits per ciphertext, section II-D), and restores
// them exactly after decryption.
type FrameCodec struct {
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
	sd := math.Sqrt(BinomialK/2.0) * math.Sqrt(4*float64(n)/3) * math.Sqrt(float64(n))
	return int(math.Ceil(math.Log2(sd))) + 7
}

// NewFrameCodec chooses the packing for the context: bits per slot is
// round(log2 q0) (30 for the 30-bit presets), capped so that 2^bits·Δ stays
// 2 bits below Q (the single-prime N = 1024 and 2048 presets carry 5 and 4
// bits per slot).
func NewFrameCodec(p Params) (*FrameCodec, error) {
	if p.N < 16 || len(p.Q) == 0 {
		return nil, fmt.Errorf("edge: frame codec: bad parameters (N=%d, %d primes)", p.N, len(p.Q))
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
		return nil, fmt.Errorf("edge: log Q = %.1f too small to carry frames at scale 2^%d", p.LogQ(), ls)
	}
	return &FrameCodec{Slots: p.N / 2, BitsPerSlot: b, Scale: math.Exp2(float64(ls))}, nil
}

// BitsPerCiphertext is N/2 · BitsPerSlot.
func (c *FrameCodec) BitsPerCiphertext() int { return c.Slots * c.BitsPerSlot }

// CiphertextsPerFrame is the number of ciphertexts one w×h frame needs.
func (c *FrameCodec) CiphertextsPerFrame(w, h int) int {
	bitsTotal := 8 * w * h
	return (bitsTotal + c.BitsPerCiphertext() - 1) / c.BitsPerCiphertext()
}

// Pack writes the slot values of ciphertext number k of frame f into out
// (len ≥ Slots): slot i carries bits [(k·Slots+i)·b, +b) of the frame's bit
// stream (little-endian bit order). Slots past the end are zero.
func (c *FrameCodec) Pack(f Frame, k int, out []float64) error {
	if len(out) < c.Slots || k < 0 || k >= c.CiphertextsPerFrame(f.W, f.H) || len(f.Pix) != f.W*f.H {
		return fmt.Errorf("edge: pack: ciphertext %d of a %dx%d frame (%d bytes) into %d slots", k, f.W, f.H, len(f.Pix), len(out))
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
func (c *FrameCodec) Unpack(slots []float64, k int, f Frame) error {
	if len(slots) < c.Slots || k < 0 || k >= c.CiphertextsPerFrame(f.W, f.H) || len(f.Pix) != f.W*f.H {
		return fmt.Errorf("edge: unpack: ciphertext %d of a %dx%d frame (%d bytes) from %d slots", k, f.W, f.H, len(f.Pix), len(slots))
	}
	b := c.BitsPerSlot
	base := k * c.Slots * b
	nbits := 8 * len(f.Pix)
	lim := float64(uint64(1) << b)
	for i := 0; i < c.Slots && base+i*b < nbits; i++ {
		x := slots[i]
		r := math.Round(x)
		if math.Abs(x-r) > 0.25 || r < 0 || r >= lim {
			return fmt.Errorf("edge: ciphertext %d slot %d decrypts to %g, not a %d-bit integer", k, i, x, b)
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

// Y4MReader reads the luma (Y) planes of a YUV4MPEG2 stream.
type Y4MReader struct {
	r         *bufio.Reader
	W, H      int
	chromaLen int
	buf       []byte
}

// maxY4MDim bounds the accepted picture size (a corrupt header must not
// make us allocate gigabytes).
const maxY4MDim = 16384

// NewY4MReader parses the stream header.
func NewY4MReader(r io.Reader) (*Y4MReader, error) {
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("edge: y4m header: %w", err)
	}
	fields := strings.Fields(strings.TrimSuffix(line, "\n"))
	if len(fields) == 0 || fields[0] != "YUV4MPEG2" {
		return nil, fmt.Errorf("edge: not a YUV4MPEG2 stream")
	}
	y := &Y4MReader{r: br}
	cs := "420"
	for _, f := range fields[1:] {
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case 'W':
			y.W, err = strconv.Atoi(f[1:])
		case 'H':
			y.H, err = strconv.Atoi(f[1:])
		case 'C':
			cs = f[1:]
		}
		if err != nil {
			return nil, fmt.Errorf("edge: y4m header field %q: %w", f, err)
		}
	}
	if y.W <= 0 || y.H <= 0 || y.W > maxY4MDim || y.H > maxY4MDim {
		return nil, fmt.Errorf("edge: y4m size %dx%d out of range", y.W, y.H)
	}
	cw, ch := (y.W+1)/2, (y.H+1)/2
	switch {
	case strings.HasPrefix(cs, "420"):
		y.chromaLen = 2 * cw * ch
	case strings.HasPrefix(cs, "422"):
		y.chromaLen = 2 * cw * y.H
	case strings.HasPrefix(cs, "444"):
		y.chromaLen = 2 * y.W * y.H
	case strings.HasPrefix(cs, "mono"):
		y.chromaLen = 0
	default:
		return nil, fmt.Errorf("edge: y4m colour space %q not supported (8-bit 420/422/444/mono)", cs)
	}
	return y, nil
}

// Next returns the next frame's Y plane, or io.EOF at the end.
func (y *Y4MReader) Next() (Frame, error) {
	line, err := y.r.ReadString('\n')
	if err == io.EOF && line == "" {
		return Frame{}, io.EOF
	}
	if err != nil {
		return Frame{}, fmt.Errorf("edge: y4m frame header: %w", err)
	}
	if !strings.HasPrefix(line, "FRAME") {
		return Frame{}, fmt.Errorf("edge: y4m: expected FRAME, got %q", strings.TrimSpace(line))
	}
	f := Frame{W: y.W, H: y.H, Pix: make([]byte, y.W*y.H)}
	if _, err := io.ReadFull(y.r, f.Pix); err != nil {
		return Frame{}, fmt.Errorf("edge: y4m luma plane: %w", err)
	}
	if _, err := y.r.Discard(y.chromaLen); err != nil {
		return Frame{}, fmt.Errorf("edge: y4m chroma planes: %w", err)
	}
	return f, nil
}

// WriteY4M writes frames as a grayscale (Cmono) YUV4MPEG2 stream.
func WriteY4M(w io.Writer, frames []Frame) error {
	if len(frames) == 0 {
		return fmt.Errorf("edge: no frames to write")
	}
	var hdr bytes.Buffer
	fmt.Fprintf(&hdr, "YUV4MPEG2 W%d H%d F30:1 Ip A1:1 Cmono\n", frames[0].W, frames[0].H)
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return fmt.Errorf("edge: write y4m: %w", err)
	}
	for i, f := range frames {
		if f.W != frames[0].W || f.H != frames[0].H || len(f.Pix) != f.W*f.H {
			return fmt.Errorf("edge: frame %d has a different size", i)
		}
		if _, err := io.WriteString(w, "FRAME\n"); err != nil {
			return fmt.Errorf("edge: write y4m: %w", err)
		}
		if _, err := w.Write(f.Pix); err != nil {
			return fmt.Errorf("edge: write y4m: %w", err)
		}
	}
	return nil
}
