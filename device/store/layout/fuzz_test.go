package layout

import (
	"bytes"
	"testing"
)

// FuzzDescriptorUnmarshal: decoding never panics, and whatever decodes
// re-encodes to the same bytes and locates every page inside its extents.
func FuzzDescriptorUnmarshal(f *testing.F) {
	f.Add([]byte{0x64, 0, 0, 0, 0xc8, 0, 0, 0, 3, 0, 2, 10, 8, 1, 1, 0x45})
	f.Add(make([]byte, 16))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Descriptor
		if err := d.UnmarshalBinary(b); err != nil {
			return
		}
		out, err := d.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded %+v does not re-encode: %v", d, err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoding % x differs from input % x", out, b)
		}
		l := Layout{Channels: 3, PageSize: 64}
		if l.Check(d) != nil {
			return
		}
		ext, err := l.Extents(d)
		if err != nil {
			t.Fatal(err)
		}
		s := d.Shape()
		k := l.PagesPerLimb(s)
		// Spot-check the first and last page of the first and last limb.
		for _, p := range [][3]int{{0, 0, 0}, {s.Polys - 1, s.Limbs - 1, k - 1}} {
			loc, err := l.Locate(d, p[0], p[1], p[2])
			if err != nil {
				t.Fatal(err)
			}
			inside := false
			for _, e := range ext {
				inside = inside || (uint64(loc.Row) >= uint64(e.Start) && uint64(loc.Row) < e.End())
			}
			if !inside {
				t.Fatalf("page %v at %+v outside %v", p, loc, ext)
			}
		}
	})
}

// FuzzLayoutUnmarshal: decoding never panics and round-trips.
func FuzzLayoutUnmarshal(f *testing.F) {
	f.Add([]byte{'R', 'L', 1, 15, 16, 0, 0, 0})
	f.Add([]byte{'R', 'L', 1, 40, 16, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Layout
		if err := l.UnmarshalBinary(b); err != nil {
			return
		}
		out, err := l.MarshalBinary()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("round trip of % x gave % x, %v", b, out, err)
		}
	})
}
