package opticomp

import (
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

func randBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func roundTrip(t *testing.T, poly []uint64, bits, seg int) Stats {
	t.Helper()
	data, st, err := Compress(poly, bits, seg)
	if err != nil {
		t.Fatal(err)
	}
	if st.CompressedBytes != len(data) {
		t.Fatalf("stats say %d bytes, output has %d", st.CompressedBytes, len(data))
	}
	if (len(data)-headerSize)%seg != 0 || (len(data)-headerSize)/seg != st.Segments {
		t.Fatalf("%d bytes are not %d segments of %d", len(data), st.Segments, seg)
	}
	back, err := Decompress(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(poly) {
		t.Fatalf("length %d, want %d", len(back), len(poly))
	}
	for i := range poly {
		if back[i] != poly[i] {
			t.Fatalf("coefficient %d = %d, want %d", i, back[i], poly[i])
		}
	}
	return st
}

func TestRoundTripPatterns(t *testing.T) {
	N := 4096
	zero := make([]uint64, N)
	if st := roundTrip(t, zero, 21, 64); st.Segments != 0 || st.CompressedBytes != headerSize {
		t.Errorf("zero polynomial: %+v", st)
	}
	dense := make([]uint64, N)
	for i, b := range randBytes(t, N) {
		dense[i] = uint64(b) | 1
	}
	roundTrip(t, dense, 8, 64) // blocks longer than a segment are split
	roundTrip(t, dense, 64, 4096)
	// Known layout: 3 runs.
	p := make([]uint64, N)
	for i := 100; i < 110; i++ {
		p[i] = uint64(i)
	}
	p[111] = 7 // gap of 1 zero: merged into the previous block
	for i := 3000; i < 3020; i++ {
		p[i] = 1<<20 | uint64(i)
	}
	st := roundTrip(t, p, 21, 128)
	if st.NonZero != 31 || st.Blocks != 2 {
		t.Errorf("stats %+v, want 31 non-zeros in 2 blocks", st)
	}
	// 2 metas + (12+20)·21 bits = 8 + 42+53 bytes: fits one 128-byte segment.
	if st.Segments != 1 || st.Ratio() < 50 {
		t.Errorf("stats %+v (ratio %.1f)", st, st.Ratio())
	}
	// Random sparse polynomials, many widths and segment sizes.
	for trial := 0; trial < 50; trial++ {
		r := randBytes(t, 8)
		bits := 1 + int(r[0]%64)
		seg := 4 + (bits+7)/8 + int(binary.LittleEndian.Uint16(r[1:])%600)
		q := make([]uint64, 1<<(6+r[3]%7))
		rb := randBytes(t, 9*len(q))
		for i := range q {
			if rb[i]%5 == 0 {
				v := binary.LittleEndian.Uint64(rb[len(q)+8*i:])
				if bits < 64 {
					v &= 1<<uint(bits) - 1
				}
				q[i] = v
			}
		}
		roundTrip(t, q, bits, seg)
	}
}

func TestRejects(t *testing.T) {
	if _, _, err := Compress(make([]uint64, 100), 8, 64); err == nil {
		t.Error("non power-of-two length accepted")
	}
	if _, _, err := Compress([]uint64{256, 0}, 8, 64); err == nil {
		t.Error("coefficient wider than the width accepted")
	}
	if _, _, err := Compress(make([]uint64, 8), 8, 4); err == nil {
		t.Error("segment smaller than a header accepted")
	}
	p := make([]uint64, 64)
	p[5], p[40] = 3, 9
	data, _, err := Compress(p, 8, 16)
	if err != nil {
		t.Fatal(err)
	}
	for k, mut := range []func([]byte){
		func(d []byte) { d[0] = 'X' },               // magic
		func(d []byte) { d[4] = 30 },                // logN
		func(d []byte) { d[5] = 0 },                 // width
		func(d []byte) { d[8] = 9 },                 // segment count
		func(d []byte) { d[headerSize+2] = 0xff },   // position/length corrupt
		func(d []byte) { d[headerSize+8] &^= 0x80 }, // end bit of the last block cleared
		func(d []byte) { d[len(d)-1] = 1 },          // padding
		func(d []byte) { d[headerSize] = 50 },       // blocks out of order
	} {
		bad := append([]byte(nil), data...)
		mut(bad)
		if _, err := Decompress(bad); err == nil {
			t.Errorf("corruption %d accepted: % x", k, bad)
		}
	}
}

// TestLayerCompression measures the real OptiEncode plaintexts of the
// ResNet-18 layer the paper uses (Co=Ci=256, 14×14, N=8192).
func TestLayerCompression(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	s := linear.ConvShape{Ci: 256, H: 14, W: 14, Co: 256, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	pl, err := linear.NewPlan(linear.OptiEncode, p, s, linear.Options{LogT: 21, WeightBits: 8})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]uint64, s.WeightLen())
	for i, b := range randBytes(t, len(w)) {
		w[i] = uint64(b) | 1 // non-zero 8-bit weights
	}
	st, err := MeasureLayer(pl, w, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ResNet-18 256×256×3×3 OptiEncode plaintexts: %+v", st)
	// C·Kh·Kw = 288 non-zeros of 8192 at 26 bits, in 9 runs of 32: ≈ 1 KB
	// against 8192·3·8 = 196 KB evaluation-domain.
	if st.RatioVsEval < 100 || st.RatioVsCoeff < 20 {
		t.Errorf("compression too weak: %+v", st)
	}
}

func TestMeasureNetwork(t *testing.T) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	opt := linear.Options{LogT: 21, WeightBits: 8}
	st, err := MeasureNetwork(nets.ResNet18(), linear.OptiEncode, p, opt, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ResNet-18 OptiEncode plaintext traffic (measured on 4 plaintexts per layer, extrapolated): %+v", st)
	if st.SavedBytes <= 0 || st.RatioVsCoeff < 2 {
		t.Errorf("no saving: %+v", st)
	}
}
