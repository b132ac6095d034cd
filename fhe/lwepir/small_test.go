package lwepir

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"math/bits"
	"testing"
)

// recordDB lays out records of random bytes in the matrix of shape (padding
// zero), as the loader does, and returns the tiles and the records.
func recordDB(t *testing.T, p Params, shape Shape, records int) (MemTiles, [][]byte) {
	t.Helper()
	n := p.N()
	tiles := make(MemTiles, shape.Tiles(p))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(p))
	}
	recs := make([][]byte, records)
	for r := range recs {
		recs[r] = make([]byte, shape.RecordSize)
		if _, err := rand.Read(recs[r]); err != nil {
			t.Fatal(err)
		}
		col, row := shape.Locate(r)
		for i, b := range recs[r] {
			tiles[col/n][(row+i)*n+col%n] = b
		}
	}
	return tiles, recs
}

// Whole queries over small databases of NewShape's shapes, sizes not powers
// of two among them, decrypt to every record exactly: the fewest rows (one
// diagonal, R = 1, whose rotate-and-sum needs every power of two), two rows
// per block (R = 2), and one record.
func TestSmallDatabasesDecode(t *testing.T) {
	p := Test()
	for _, c := range []struct{ records, size, rows int }{
		{1, 1, 4},
		{1, 3, 4},
		{1, 100, 128},
		{3, 7, 8},
		{5, 37, 64},
		{77, 13, 16},
		{1000, 5, 8},
		{300, 100, 128},
	} {
		t.Run(fmt.Sprintf("%dx%dB", c.records, c.size), func(t *testing.T) {
			shape, err := NewShape(p, c.records, c.size)
			if err != nil {
				t.Fatal(err)
			}
			if shape.Rows != c.rows {
				t.Fatalf("shape %+v, want %d rows", shape, c.rows)
			}
			tiles, recs := recordDB(t, p, shape, c.records)
			pp := newPIR(t, p, shape, tiles)
			diags, evk, cl, srv := pp.diags, pp.evk, pp.cl, pp.srv
			for _, r := range []int{0, c.records / 2, c.records - 1} {
				col, err := cl.Column(r)
				if err != nil {
					t.Fatal(err)
				}
				q, st, err := cl.Query(col)
				if err != nil {
					t.Fatal(err)
				}
				ans, err := srv.Answer(context.Background(), evk, q, tiles, diags)
				if err != nil {
					t.Fatal(err)
				}
				column, err := cl.Decode(st, ans)
				if err != nil {
					t.Fatal(err)
				}
				got, err := cl.Record(column, r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, recs[r]) {
					t.Fatalf("record %d: got %x, want %x", r, got, recs[r])
				}
			}
		})
	}
}

// storedBound is the most NewShape's shape may store for records records of
// size bytes, S bytes in all. Tiles: a column holds ⌊Rows/size⌋ ≥ Rows/(2·size)
// records, and the columns are rounded up to N, so Rows·Cols ≤ 2·S + N·Rows.
// Hint: 16·N bytes per row (Rows ≥ Groups). Rows is the smallest power of two
// ≥ max(Groups, size) unless S needs more, and then half of it failed one
// of NewShape's two conditions, S ≤ 2^19·Rows or S ≤ 4·N·Rows²: so
// Rows ≤ max(pow2(max(Groups, size)), S/2^18, √(S/N)). In all,
//
//	stored ≤ 2·S + 17·N·max(pow2(max(Groups, size)), S/2^18, √(S/N)),
//
// a floor set by the record size (a record lies in one column) and, beyond
// it, a part proportional to S (2.13·S at most, 1.06·S with no padding) or
// to √S while the query would outweigh the hint.
func storedBound(p Params, records, size int) float64 {
	n, g := float64(p.N()), p.HintSlots()/p.N()
	s := float64(records) * float64(size)
	floor := float64(uint(1) << bits.Len(uint(max(g, size)-1)))
	return 2*s + 17*n*max(floor, s/(1<<18), math.Sqrt(s/n))
}

// The stored bytes of a database follow its size: below the bound of
// storedBound at the default parameters, for small databases (the ones
// that used to get a fixed 8192-row layout, 272 MiB), medium ones and a
// 4 GiB one, whose shape is the one it always had.
func TestStoredBytesFollowTheDatabase(t *testing.T) {
	p := Default()
	for _, c := range []struct {
		records, size int
		rows          int
	}{
		{1, 1, 4},
		{1, 256, 256},
		{256, 256, 256},  // 64 KiB
		{4096, 256, 256}, // 1 MiB
		{65536, 256, 256},
		{1 << 16, 16, 16},    // 1 MiB of 16-byte records
		{1 << 20, 16, 64},    // 16 MiB
		{12345, 100, 128},    // 1.2 MB
		{1 << 18, 256, 256},  // 64 MiB
		{1 << 24, 256, 8192}, // 4 GiB: as before
	} {
		shape, err := NewShape(p, c.records, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if shape.Rows != c.rows {
			t.Fatalf("%d × %d B: %d rows, want %d", c.records, c.size, shape.Rows, c.rows)
		}
		got, bound := shape.StoredBytes(p), storedBound(p, c.records, c.size)
		if float64(got) > bound {
			t.Fatalf("%d × %d B (%+v): %d bytes stored, bound %.0f", c.records, c.size, shape, got, bound)
		}
	}
	// The layout an unsized load used to get stores far beyond the bound.
	old := Shape{Rows: p.HintSlots(), Cols: p.N(), RecordSize: 256}
	if float64(old.StoredBytes(p)) <= storedBound(p, 256, 256) {
		t.Fatal("the bound does not tell the fixed 8192-row layout from a sized one")
	}
}
