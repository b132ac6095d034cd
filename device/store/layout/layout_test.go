package layout

import (
	"bytes"
	"fmt"
	"testing"
)

// TestLocateKnownVectors pins the interleaving rule to hand-computed locations.
func TestLocateKnownVectors(t *testing.T) {
	type page struct {
		poly, limb, page, ch int
		row                  uint32
	}
	cases := []struct {
		name  string
		l     Layout
		s     Shape
		base  [2]uint32
		rows  [2]int64
		pages []page
	}{
		{
			// 4 channels, limbs of 2 pages: part 1 (poly 1) continues the
			// round-robin at channel 6 mod 4 = 2.
			name: "C4_k2",
			l:    Layout{Channels: 4, PageSize: 4096},
			s:    Shape{Polys: 2, Limbs: 3, LogN: 10, WordSize: 8},
			base: [2]uint32{100, 200},
			rows: [2]int64{2, 2},
			pages: []page{
				{0, 0, 0, 0, 100}, {0, 0, 1, 1, 100},
				{0, 1, 0, 2, 100}, {0, 1, 1, 3, 100},
				{0, 2, 0, 0, 101}, {0, 2, 1, 1, 101},
				{1, 0, 0, 2, 200}, {1, 0, 1, 3, 200},
				{1, 1, 0, 0, 201}, {1, 1, 1, 1, 201},
				{1, 2, 0, 2, 201}, {1, 2, 1, 3, 201},
			},
		},
		{
			// 3-page limbs (192 B in 64 B pages) over 4 channels: limb starts
			// rotate 0, 3, 2.
			name: "C4_k3_polys3",
			l:    Layout{Channels: 4, PageSize: 64},
			s:    Shape{Polys: 3, Limbs: 1, LogN: 5, WordSize: 6},
			base: [2]uint32{0, 7},
			rows: [2]int64{2, 2},
			pages: []page{
				{0, 0, 0, 0, 0}, {0, 0, 1, 1, 0}, {0, 0, 2, 2, 0},
				{1, 0, 0, 3, 0}, {1, 0, 1, 0, 1}, {1, 0, 2, 1, 1},
				{2, 0, 0, 2, 7}, {2, 0, 1, 3, 7}, {2, 0, 2, 0, 8},
			},
		},
		{
			name:  "C1",
			l:     Layout{Channels: 1, PageSize: 64},
			s:     Shape{Polys: 1, Limbs: 2, LogN: 4, WordSize: 5}, // 80 B: 2 pages
			base:  [2]uint32{9, 0},
			rows:  [2]int64{4, 0},
			pages: []page{{0, 0, 0, 0, 9}, {0, 0, 1, 0, 10}, {0, 1, 0, 0, 11}, {0, 1, 1, 0, 12}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.PartRows(tc.s); got != tc.rows {
				t.Fatalf("PartRows = %v, want %v", got, tc.rows)
			}
			d, err := tc.l.NewDescriptor(tc.s, tc.base, 0)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(tc.pages)) != tc.l.PagesPerObject(tc.s) {
				t.Fatalf("vector lists %d pages, object has %d", len(tc.pages), tc.l.PagesPerObject(tc.s))
			}
			for _, p := range tc.pages {
				got, err := tc.l.Locate(d, p.poly, p.limb, p.page)
				if err != nil {
					t.Fatal(err)
				}
				if want := (Loc{Channel: p.ch, Row: p.row}); got != want {
					t.Errorf("Locate(%d,%d,%d) = %+v, want %+v", p.poly, p.limb, p.page, got, want)
				}
			}
		})
	}
}

func TestLimbRunsKnownVector(t *testing.T) {
	l := Layout{Channels: 4, PageSize: 64}
	d, err := l.NewDescriptor(Shape{Polys: 3, Limbs: 1, LogN: 5, WordSize: 6}, [2]uint32{0, 7}, 0)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := l.LimbRuns(d, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Run{
		{Channel: 0, Row: 1, Count: 1, FirstPage: 1, Stride: 4},
		{Channel: 1, Row: 1, Count: 1, FirstPage: 2, Stride: 4},
		{Channel: 3, Row: 0, Count: 1, FirstPage: 0, Stride: 4},
	}
	if fmt.Sprint(runs) != fmt.Sprint(want) {
		t.Fatalf("LimbRuns = %+v, want %+v", runs, want)
	}
}

// shapesForTest enumerates small shapes whose limbs span 1..11 pages of 64 B.
func shapesForTest() []Shape {
	var out []Shape
	sizes := []struct{ logN, word uint8 }{{0, 1}, {6, 1}, {4, 5}, {5, 6}, {6, 3}, {7, 5}, {6, 11}}
	for polys := 1; polys <= 5; polys++ {
		for limbs := 1; limbs <= 4; limbs++ {
			for _, sz := range sizes {
				out = append(out, Shape{Polys: polys, Limbs: limbs, LogN: sz.logN, WordSize: sz.word})
			}
		}
	}
	return out
}

// TestLayoutProperties checks, exhaustively over small geometries, that every
// page has a unique location inside the object's extents, that each limb and
// the whole object are balanced across channels, and that LimbRuns agrees
// with Locate.
func TestLayoutProperties(t *testing.T) {
	for c := 1; c <= 9; c++ {
		l := Layout{Channels: c, PageSize: 64}
		for _, s := range shapesForTest() {
			rows := l.PartRows(s)
			base := [2]uint32{3, uint32(3 + rows[0] + 5)}
			if s.Polys == 1 {
				base[1] = 0
			}
			d, err := l.NewDescriptor(s, base, 7)
			if err != nil {
				t.Fatal(err)
			}
			checkObject(t, l, d)
		}
	}
}

func checkObject(t *testing.T, l Layout, d Descriptor) {
	t.Helper()
	s := d.Shape()
	k := l.PagesPerLimb(s)
	ext, err := l.Extents(d)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Loc]string{}
	objCount := make([]int, l.Channels)
	for poly := 0; poly < s.Polys; poly++ {
		for limb := 0; limb < s.Limbs; limb++ {
			limbCount := make([]int, l.Channels)
			byPage := make([]Loc, k)
			for page := 0; page < k; page++ {
				loc, err := l.Locate(d, poly, limb, page)
				if err != nil {
					t.Fatal(err)
				}
				id := fmt.Sprintf("(%d,%d,%d)", poly, limb, page)
				if prev, dup := seen[loc]; dup {
					t.Fatalf("%v %s: pages %s and %s both at %+v", l, s, prev, id, loc)
				}
				seen[loc] = id
				inside := false
				for _, e := range ext {
					inside = inside || (uint64(loc.Row) >= uint64(e.Start) && uint64(loc.Row) < e.End())
				}
				if !inside || loc.Channel < 0 || loc.Channel >= l.Channels {
					t.Fatalf("%v %s: page %s at %+v outside extents %v", l, s, id, loc, ext)
				}
				limbCount[loc.Channel]++
				objCount[loc.Channel]++
				byPage[page] = loc
			}
			if lo, hi := minMax(limbCount); hi-lo > 1 {
				t.Fatalf("%v %s: limb (%d,%d) per-channel pages %v differ by %d", l, s, poly, limb, limbCount, hi-lo)
			}
			runs, err := l.LimbRuns(d, poly, limb)
			if err != nil {
				t.Fatal(err)
			}
			covered := 0
			for i, r := range runs {
				if i > 0 && runs[i-1].Channel >= r.Channel {
					t.Fatalf("runs not ordered by channel: %+v", runs)
				}
				for j := 0; j < r.Count; j++ {
					want := Loc{Channel: r.Channel, Row: r.Row + uint32(j)}
					if got := byPage[r.FirstPage+j*r.Stride]; got != want {
						t.Fatalf("%v %s: run %+v page %d at %+v, Locate says %+v", l, s, r, r.FirstPage+j*r.Stride, want, got)
					}
				}
				covered += r.Count
			}
			if covered != k {
				t.Fatalf("%v %s: runs cover %d of %d pages", l, s, covered, k)
			}
		}
	}
	// PageAt inverts Locate on every slot of the extents, and the slots it
	// rejects are exactly those no page maps to.
	for _, e := range ext {
		for row := uint64(e.Start); row < e.End(); row++ {
			for ch := 0; ch < l.Channels; ch++ {
				loc := Loc{Channel: ch, Row: uint32(row)}
				poly, limb, page, ok := l.PageAt(d, ch, uint32(row))
				id, used := seen[loc]
				if ok != used || (ok && id != fmt.Sprintf("(%d,%d,%d)", poly, limb, page)) {
					t.Fatalf("%v %s: PageAt%+v = (%d,%d,%d,%v), Locate put %q there", l, s, loc, poly, limb, page, ok, id)
				}
			}
		}
	}
	if _, _, _, ok := l.PageAt(d, 0, ext[len(ext)-1].Start+ext[len(ext)-1].Rows); ok {
		t.Fatalf("%v %s: PageAt past the last extent succeeded", l, s)
	}
	if lo, hi := minMax(objCount); hi-lo > 1 {
		t.Fatalf("%v %s: object per-channel pages %v differ by %d", l, s, objCount, hi-lo)
	}
}

func minMax(v []int) (lo, hi int) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// TestTwoObjectsDisjoint places two objects in adjacent extents and checks
// that their pages never collide.
func TestTwoObjectsDisjoint(t *testing.T) {
	l := Layout{Channels: 5, PageSize: 64}
	a := Shape{Polys: 3, Limbs: 4, LogN: 6, WordSize: 3}
	b := Shape{Polys: 2, Limbs: 3, LogN: 7, WordSize: 5}
	ra, rb := l.PartRows(a), l.PartRows(b)
	da, err := l.NewDescriptor(a, [2]uint32{0, uint32(ra[0])}, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := uint32(ra[0] + ra[1])
	db, err := l.NewDescriptor(b, [2]uint32{next, next + uint32(rb[0])}, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Loc]bool{}
	for _, d := range []Descriptor{da, db} {
		s := d.Shape()
		for poly := 0; poly < s.Polys; poly++ {
			for limb := 0; limb < s.Limbs; limb++ {
				for page := 0; page < l.PagesPerLimb(s); page++ {
					loc, err := l.Locate(d, poly, limb, page)
					if err != nil {
						t.Fatal(err)
					}
					if seen[loc] {
						t.Fatalf("collision at %+v", loc)
					}
					seen[loc] = true
				}
			}
		}
	}
	if want := int(l.PagesPerObject(a) + l.PagesPerObject(b)); len(seen) != want {
		t.Fatalf("%d locations, want %d", len(seen), want)
	}
}

func TestDescriptorKnownBytes(t *testing.T) {
	d := Descriptor{Base: [2]uint32{100, 200}, Limbs: 3, Polys: 2, LogN: 10, WordSize: 8, Rule: RuleStripe, Class: 1}
	want := []byte{0x64, 0, 0, 0, 0xc8, 0, 0, 0, 3, 0, 2, 10, 8, 1, 1, 0x45}
	got, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("MarshalBinary = % x, want % x", got, want)
	}
	var back Descriptor
	if err := back.UnmarshalBinary(want); err != nil {
		t.Fatal(err)
	}
	if back != d {
		t.Fatalf("round trip = %+v, want %+v", back, d)
	}
	// Any single flipped bit is detected (check byte or field validation).
	for i := 0; i < len(want)*8; i++ {
		bad := bytes.Clone(want)
		bad[i/8] ^= 1 << (i % 8)
		if err := back.UnmarshalBinary(bad); err == nil {
			t.Fatalf("bit %d flipped: decoded without error", i)
		}
	}
}

func TestDescriptorRejects(t *testing.T) {
	l := Layout{Channels: 4, PageSize: 64}
	bad := []struct {
		name string
		s    Shape
		base [2]uint32
	}{
		{"zero polys", Shape{Polys: 0, Limbs: 1, LogN: 1, WordSize: 1}, [2]uint32{}},
		{"zero limbs", Shape{Polys: 1, Limbs: 0, LogN: 1, WordSize: 1}, [2]uint32{}},
		{"zero word", Shape{Polys: 1, Limbs: 1, LogN: 1, WordSize: 0}, [2]uint32{}},
		{"huge limb", Shape{Polys: 1, Limbs: 1, LogN: 30, WordSize: 2}, [2]uint32{}},
		{"big logN", Shape{Polys: 1, Limbs: 1, LogN: 31, WordSize: 1}, [2]uint32{}},
		{"single poly second base", Shape{Polys: 1, Limbs: 1, LogN: 1, WordSize: 1}, [2]uint32{0, 5}},
		{"past 2^32 rows", Shape{Polys: 1, Limbs: 8, LogN: 8, WordSize: 1}, [2]uint32{1<<32 - 1, 0}},
	}
	for _, tc := range bad {
		if _, err := l.NewDescriptor(tc.s, tc.base, 0); err == nil {
			t.Errorf("%s: NewDescriptor accepted %+v base %v", tc.name, tc.s, tc.base)
		}
	}
	d, err := l.NewDescriptor(Shape{Polys: 2, Limbs: 2, LogN: 6, WordSize: 1}, [2]uint32{0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][3]int{{-1, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0, 0, 1}, {0, -1, 0}} {
		if _, err := l.Locate(d, p[0], p[1], p[2]); err == nil {
			t.Errorf("Locate%v accepted", p)
		}
	}
	if _, err := l.LimbRuns(d, 0, 5); err == nil {
		t.Error("LimbRuns accepted limb 5 of 2")
	}
}

func TestLayoutRecord(t *testing.T) {
	l := Layout{Channels: 16, PageSize: 32 << 10}
	b, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{'R', 'L', 1, 15, 16, 0, 0, 0}; !bytes.Equal(b, want) {
		t.Fatalf("MarshalBinary = % x, want % x", b, want)
	}
	var back Layout
	if err := back.UnmarshalBinary(b); err != nil || back != l {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	for _, bad := range []Layout{{0, 4096}, {257, 4096}, {4, 100}, {4, 32}, {4, 1 << 25}} {
		if _, err := bad.MarshalBinary(); err == nil {
			t.Errorf("MarshalBinary accepted %+v", bad)
		}
	}
}

// The paper's example: N = 2^16, 4-byte coefficients, 16 KiB pages, two
// polynomials of L = 30 limbs occupy 960 pages, described by 16 bytes.
func TestPaperExample(t *testing.T) {
	l := Layout{Channels: 16, PageSize: 16 << 10}
	s := Shape{Polys: 2, Limbs: 30, LogN: 16, WordSize: 4}
	if got := l.PagesPerObject(s); got != 960 {
		t.Fatalf("pages = %d, want 960", got)
	}
	rows := l.PartRows(s)
	if rows != [2]int64{30, 30} {
		t.Fatalf("PartRows = %v, want [30 30]", rows)
	}
	d, err := l.NewDescriptor(s, [2]uint32{0, 30}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.MarshalBinary()
	if err != nil || len(b) != 16 {
		t.Fatalf("descriptor %d bytes, %v", len(b), err)
	}
	checkObject(t, l, d)
}

func TestPlace(t *testing.T) {
	l := Layout{Channels: 4, PageSize: 4096}
	d, err := l.Place(Shape{Polys: 2, Limbs: 3, LogN: 10, WordSize: 8}, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d.Base != [2]uint32{100, 102} || d.Class != 2 || d.Rule != RuleStripe {
		t.Fatalf("Place = %+v, want bases 100/102", d)
	}
	checkObject(t, l, d)
	one, err := l.Place(Shape{Polys: 1, Limbs: 3, LogN: 10, WordSize: 8}, 7, 0)
	if err != nil || one.Base != [2]uint32{7, 0} {
		t.Fatalf("Place single poly = %+v, %v", one, err)
	}
	if _, err := l.Place(Shape{Polys: 2, Limbs: 3, LogN: 10, WordSize: 8}, 1<<32-1, 0); err == nil {
		t.Fatal("Place past row 2^32 accepted")
	}
}
