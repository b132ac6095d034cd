package opticomp

import (
	"encoding/binary"
	"testing"
)

func FuzzDecompress(f *testing.F) {
	p := make([]uint64, 64)
	p[3], p[4], p[40] = 1, 2, 300
	good, _, err := Compress(p, 9, 16)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		poly, err := Decompress(data)
		if err != nil {
			return
		}
		// Whatever is accepted recompresses into something that decodes to
		// the same polynomial.
		bits := int(data[5])
		seg := int(binary.LittleEndian.Uint16(data[6:]))
		again, _, err := Compress(poly, bits, seg)
		if err != nil {
			t.Fatalf("accepted polynomial does not recompress: %v", err)
		}
		back, err := Decompress(again)
		if err != nil {
			t.Fatalf("recompressed form rejected: %v", err)
		}
		for i := range poly {
			if back[i] != poly[i] {
				t.Fatalf("recompression changed coefficient %d", i)
			}
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 0, 0, 0, 7}, uint8(8), uint16(16))
	f.Fuzz(func(t *testing.T, raw []byte, bits8 uint8, seg uint16) {
		bits := 1 + int(bits8%64)
		n := 1
		for n < len(raw) {
			n *= 2
		}
		poly := make([]uint64, n)
		for i, b := range raw {
			v := uint64(b) * 0x0101010101010101
			if bits < 64 {
				v &= 1<<uint(bits) - 1
			}
			poly[i] = v
		}
		data, _, err := Compress(poly, bits, int(seg))
		if err != nil {
			return // segment size out of range
		}
		back, err := Decompress(data)
		if err != nil {
			t.Fatalf("own output rejected: %v", err)
		}
		for i := range poly {
			if back[i] != poly[i] {
				t.Fatalf("coefficient %d = %d, want %d", i, back[i], poly[i])
			}
		}
	})
}
