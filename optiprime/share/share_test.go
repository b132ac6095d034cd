package share

import (
	"bytes"
	"math"
	"math/big"
	"slices"
	"testing"
)

func testPRG(t testing.TB) *PRG {
	g, err := NewPRG()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNewRing(t *testing.T) {
	for _, b := range []int{0, -1, 65} {
		if _, err := NewRing(b); err == nil {
			t.Errorf("NewRing(%d) accepted", b)
		}
	}
	r, _ := NewRing(37)
	if r.Mask() != 1<<37-1 || r.MaxSigned() != 1<<36-1 || r.MinSigned() != -(1<<36) {
		t.Errorf("ring 37: mask %x max %d min %d", r.Mask(), r.MaxSigned(), r.MinSigned())
	}
	r64, _ := NewRing(64)
	if r64.MaxSigned() != math.MaxInt64 || r64.MinSigned() != math.MinInt64 {
		t.Errorf("ring 64 bounds %d %d", r64.MinSigned(), r64.MaxSigned())
	}
}

// Ring arithmetic against math/big modulo 2^ℓ.
func TestRingOpsAgainstBig(t *testing.T) {
	g := testPRG(t)
	for _, bits := range []int{1, 2, 12, 37, 44, 63, 64} {
		r, _ := NewRing(bits)
		mod := new(big.Int).Lsh(big.NewInt(1), uint(bits))
		red := func(z *big.Int) uint64 { return new(big.Int).Mod(z, mod).Uint64() }
		for i := 0; i < 500; i++ {
			x, y := g.Uint64()&r.Mask(), g.Uint64()&r.Mask()
			bx, by := new(big.Int).SetUint64(x), new(big.Int).SetUint64(y)
			if got, want := r.Add(x, y), red(new(big.Int).Add(bx, by)); got != want {
				t.Fatalf("ℓ=%d add %d %d = %d want %d", bits, x, y, got, want)
			}
			if got, want := r.Sub(x, y), red(new(big.Int).Sub(bx, by)); got != want {
				t.Fatalf("ℓ=%d sub", bits)
			}
			if got, want := r.Mul(x, y), red(new(big.Int).Mul(bx, by)); got != want {
				t.Fatalf("ℓ=%d mul", bits)
			}
			if got, want := r.Neg(x), red(new(big.Int).Neg(bx)); got != want {
				t.Fatalf("ℓ=%d neg", bits)
			}
			s := r.ToSigned(x)
			if r.FromSigned(s) != x || s < r.MinSigned() || s > r.MaxSigned() {
				t.Fatalf("ℓ=%d signed round trip %d -> %d", bits, x, s)
			}
		}
	}
}

func TestSignedEdges(t *testing.T) {
	r, _ := NewRing(37)
	cases := map[int64]uint64{0: 0, -1: 1<<37 - 1, 1<<36 - 1: 1<<36 - 1, -(1 << 36): 1 << 36}
	for v, want := range cases {
		if got := r.FromSigned(v); got != want {
			t.Errorf("FromSigned(%d) = %x want %x", v, got, want)
		}
		if got := r.ToSigned(want); got != v {
			t.Errorf("ToSigned(%x) = %d want %d", want, got, v)
		}
	}
	if r.MSB(1<<36) != 1 || r.MSB(1<<36-1) != 0 {
		t.Error("MSB wrong")
	}
}

func TestSplitReconstruct(t *testing.T) {
	g := testPRG(t)
	r, _ := NewRing(44)
	x := g.Uniform(r, 1000)
	x[0], x[1], x[2] = 0, r.Mask(), 1<<43
	x0, x1 := r.Split(g, x)
	got, err := r.Reconstruct(x0, x1)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range x {
		if got[i] != x[i] {
			t.Fatalf("element %d: %d != %d", i, got[i], x[i])
		}
		if x0[i] > r.Mask() || x1[i] > r.Mask() {
			t.Fatal("share not reduced")
		}
		if x0[i] == x[i] {
			same++
		}
	}
	if same > 2 { // x0 is uniform in 2^44 values
		t.Errorf("share equals the secret %d times", same)
	}
	if _, err := r.Reconstruct(x0, x1[:3]); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestFixedPoint(t *testing.T) {
	r, _ := NewRing(37)
	cases := []struct {
		v    float64
		want int64
	}{{0, 0}, {1, 4096}, {-1, -4096}, {0.5, 2048}, {1.0 / 4096, 1}, {-1.0 / 4096, -1}, {1.0 / 8192, 1}, {-3.25, -13312}}
	for _, c := range cases {
		e, err := r.Encode(c.v, Scale)
		if err != nil {
			t.Fatal(err)
		}
		if r.ToSigned(e) != c.want {
			t.Errorf("Encode(%v) = %d want %d", c.v, r.ToSigned(e), c.want)
		}
		if d := r.Decode(e, Scale); math.Abs(d-c.v) > 0.5/4096 {
			t.Errorf("Decode(Encode(%v)) = %v", c.v, d)
		}
	}
	max := math.Ldexp(float64(r.MaxSigned()), -Scale)
	if _, err := r.Encode(max, Scale); err != nil {
		t.Errorf("max encodable value rejected: %v", err)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), max + 1, -max - 2} {
		if _, err := r.Encode(bad, Scale); err == nil {
			t.Errorf("Encode(%v) accepted", bad)
		}
	}
	v, err := r.EncodeVec([]float64{1.5, -2}, Scale)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.DecodeVec(v, Scale); d[0] != 1.5 || d[1] != -2 {
		t.Errorf("DecodeVec %v", d)
	}
	if _, err := r.EncodeVec([]float64{1, math.NaN()}, Scale); err == nil {
		t.Error("EncodeVec accepted NaN")
	}
}

func TestPRG(t *testing.T) {
	seed := []byte("0123456789abcdef0123456789abcdef")
	a, b := NewPRGFromSeed(seed, "x"), NewPRGFromSeed(seed, "x")
	c := NewPRGFromSeed(seed, "y")
	pa, pb, pc := make([]byte, 1000), make([]byte, 1000), make([]byte, 1000)
	// Read a in odd pieces to exercise buffering.
	a.Read(pa[:3])
	a.Read(pa[3:700])
	a.Read(pa[700:])
	b.Read(pb)
	c.Read(pc)
	if !bytes.Equal(pa, pb) {
		t.Error("same seed, different streams")
	}
	if bytes.Equal(pa, pc) {
		t.Error("labels do not separate streams")
	}
	r, _ := NewRing(5)
	for _, u := range NewPRGFromSeed(seed, "z").Uniform(r, 100) {
		if u > 31 {
			t.Fatal("Uniform not reduced")
		}
	}
	ones := 0
	for _, bit := range testPRG(t).Bits(10000) {
		if bit > 1 {
			t.Fatal("Bits returned non-bit")
		}
		ones += int(bit)
	}
	if ones < 4500 || ones > 5500 { // 10 standard deviations
		t.Errorf("%d ones in 10000 bits", ones)
	}
}

func TestPackUnpack(t *testing.T) {
	g := testPRG(t)
	for bits := 1; bits <= 64; bits++ {
		for _, n := range []int{0, 1, 7, 9, 64, 65} {
			vals := make([]uint64, n)
			for i := range vals {
				vals[i] = g.Uint64() & Mask(bits)
			}
			b := Pack(nil, vals, bits)
			if len(b) != PackedLen(n, bits) {
				t.Fatalf("bits %d n %d: packed %d bytes want %d", bits, n, len(b), PackedLen(n, bits))
			}
			got, err := Unpack(b, n, bits)
			if err != nil {
				t.Fatal(err)
			}
			for i := range vals {
				if got[i] != vals[i] {
					t.Fatalf("bits %d n %d: value %d: %x != %x", bits, n, i, got[i], vals[i])
				}
			}
		}
	}
	// Known vector: 3-bit values 1..5 → bits 001 010 011 100 101 (LSB first).
	if b := Pack(nil, []uint64{1, 2, 3, 4, 5}, 3); !bytes.Equal(b, []byte{0b11_010_001, 0b0_101_100_0}) {
		t.Errorf("known vector % 08b", b)
	}
	if _, err := Unpack([]byte{1, 2}, 3, 3); err == nil {
		t.Error("wrong length accepted")
	}
	if _, err := Unpack([]byte{0xff, 0xff}, 5, 3); err == nil {
		t.Error("nonzero padding accepted")
	}
	if _, err := Unpack(nil, 1, 65); err == nil {
		t.Error("width 65 accepted")
	}
}

// UnpackInto reads the front of a longer buffer and ignores the padding,
// which its callers frame and check themselves.
func TestUnpackIntoPrefix(t *testing.T) {
	b := append(Pack(nil, []uint64{1, 2, 3, 4, 5}, 3), 0xaa)
	b[1] |= 0x80 // a padding bit
	out := make([]uint64, 5)
	UnpackInto(out, b, 3)
	if want := []uint64{1, 2, 3, 4, 5}; !slices.Equal(out, want) {
		t.Fatalf("got %v, want %v", out, want)
	}
}

// FuzzUnpack: Unpack never panics, and what it accepts re-packs to the input.
func FuzzUnpack(f *testing.F) {
	f.Add([]byte{0xd1, 0x58}, 5, 3)
	f.Add([]byte{}, 0, 64)
	f.Add([]byte{0xff}, 1, 8)
	f.Fuzz(func(t *testing.T, b []byte, n, bits int) {
		if n > 1<<16 {
			return
		}
		vals, err := Unpack(b, n, bits)
		if err != nil {
			return
		}
		if !bytes.Equal(Pack(nil, vals, bits), b) {
			t.Fatalf("re-pack differs")
		}
	})
}
