package lwepir

import (
	"bytes"
	"context"
	"errors"
	"math"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// A packed query of PackV2 goes in 28-bit words, two to 7 bytes: a known
// pair's bytes, round trips of every length parity, the rounding's edges,
// and malformed lengths and padding refused. PackV1 keeps 32-bit words.
func TestQueryWords(t *testing.T) {
	p2, _ := Default().WithPacking(PackV2)
	p1, _ := Default().WithPacking(PackV1)
	got := MarshalQuery(p2, []uint32{0x12345670, 0xfedcba90})
	if want := []byte{0x67, 0x45, 0x23, 0x91, 0xba, 0xdc, 0xfe}; !bytes.Equal(got, want) {
		t.Fatalf("a pair: % x, want % x", got, want)
	}
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 2048, 2049} {
		v := make([]uint32, n)
		for i := range v {
			v[i] = mrand.Uint32()
		}
		roundQuery(v, 28)
		b := MarshalQuery(p2, v)
		if len(b) != QueryBytes(p2, n) || len(b) != (7*n+1)/2 {
			t.Fatalf("%d words: %d bytes", n, len(b))
		}
		back, err := UnmarshalQuery(p2, b, n)
		if err != nil || !slices.Equal(back, v) {
			t.Fatalf("%d words do not round trip: %v", n, err)
		}
		if _, err := UnmarshalQuery(p2, append(b, 0), n); !errors.Is(err, ErrParams) {
			t.Fatalf("%d words and a byte more: %v", n, err)
		}
		if b1 := MarshalQuery(p1, v); !bytes.Equal(b1, MarshalWords(v)) {
			t.Fatal("PackV1's query is not 32-bit words")
		}
	}
	odd := MarshalQuery(p2, []uint32{0x10})
	odd[3] |= 0x10 // a bit of the padding half-byte
	if _, err := UnmarshalQuery(p2, odd, 1); !errors.Is(err, ErrParams) {
		t.Fatalf("padding set: %v", err)
	}
	v := []uint32{0x7, 0x8, 0x17, 0xfffffff8, 0xfffffff7, 0x10}
	roundQuery(v, 28)
	if want := []uint32{0x0, 0x10, 0x10, 0x0, 0xfffffff0, 0x10}; !slices.Equal(v, want) {
		t.Fatalf("rounded to 28 bits: %x, want %x", v, want)
	}
}

// FuzzUnmarshalQuery: whatever the bytes, the 28-bit decoder refuses them
// or decodes words that encode back to the same bytes, and never panics.
func FuzzUnmarshalQuery(f *testing.F) {
	p, _ := Default().WithPacking(PackV2)
	f.Add([]byte{0x67, 0x45, 0x23, 0x91, 0xba, 0xdc, 0xfe}, 2)
	f.Add([]byte{1, 2, 3, 4}, 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		v, err := UnmarshalQuery(p, b, n)
		if err != nil {
			if !errors.Is(err, ErrParams) {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if again := MarshalQuery(p, v); !bytes.Equal(again, b) {
			t.Fatalf("% x decodes to words that encode as % x", b, again)
		}
	})
}

// The query's rounding to 28 bits, at the widest matrix (2^20 columns,
// MaxLogCols, where the scan's noise is largest): the phase of every row
// against Δ·(D − 128) of the queried column, measured with the hint as
// SimplePIR decodes, for 32-bit words (PackV1) and 28-bit ones (PackV2).
// Measured here: σ = 2^18.8 and 2^19.5 (the package doc); decoding
// tolerates 2^23.
func TestQueryRoundingNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("2^20 columns: a few seconds")
	}
	base := Default()
	n := base.N()
	shape := Shape{Rows: 32, Cols: 1 << MaxLogCols, RecordSize: 1}
	tiles := make(MemTiles, shape.Tiles(base))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(base))
		for i := range tiles[k] {
			tiles[k][i] = byte(mrand.Uint32())
		}
	}
	var seed [SeedSize]byte
	h, err := ComputeHint(context.Background(), base, shape, seed, tiles)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(base, shape)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v     PackVersion
		worst float64 // log2 of the largest |noise| allowed
	}{{PackV1, 21.5}, {PackV2, 22}} {
		p, _ := base.WithPacking(c.v)
		cl, err := NewPackedClient(p, shape, seed)
		if err != nil {
			t.Fatal(err)
		}
		var sumSq, worst float64
		var count int
		for _, col := range []int{0, 123457, shape.Cols - 1} {
			q, st, err := cl.PackedQuery(col)
			if err != nil {
				t.Fatal(err)
			}
			column, err := srv.Scan(context.Background(), []*matvec.Query{matvec.NewQuery(q.Vector)}, tiles, nil)
			if err != nil {
				t.Fatal(err)
			}
			var sum uint32
			for _, w := range q.Vector {
				sum += w
			}
			for i := range shape.Rows {
				var hs uint32
				for j, x := range h[i*n : (i+1)*n] {
					hs += x * uint32(st.s[j])
				}
				d := uint32(tiles[col/n][i*n+col%n])
				e := float64(int32(column[0][i] - centre*sum - hs - (d-centre)<<logDelta))
				sumSq, worst, count = sumSq+e*e, max(worst, math.Abs(e)), count+1
			}
		}
		sigma := math.Sqrt(sumSq / float64(count))
		t.Logf("version %d (%d-bit query words): σ = 2^%.1f, largest of %d 2^%.1f", c.v, p.Pack().QueryBits, math.Log2(sigma), count, math.Log2(worst))
		if worst > math.Exp2(c.worst) {
			t.Fatalf("version %d: noise 2^%.1f, above 2^%.1f", c.v, math.Log2(worst), c.worst)
		}
	}
}
