package object

import (
	"bytes"
	"testing"
)

func TestBlobRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 12, 13, 100, 4096} {
		b := bytes.Repeat([]byte{0xab}, n)
		limb := EncodeBlob(b)
		if len(limb) < 16 || len(limb)&(len(limb)-1) != 0 || len(limb) < n+4 {
			t.Fatalf("%d bytes: a limb of %d", n, len(limb))
		}
		if s := BlobShape(len(limb)); s.LimbBytes() != len(limb) || s.NumLimbs() != 1 {
			t.Fatalf("%d bytes: shape %+v for a limb of %d", n, s, len(limb))
		}
		got, err := DecodeBlob(limb)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: %v, %v", n, len(got), err)
		}
	}
	for _, bad := range [][]byte{nil, {1, 0}, {5, 0, 0, 0, 1}} {
		if _, err := DecodeBlob(bad); err == nil {
			t.Errorf("DecodeBlob(%v) accepted", bad)
		}
	}
}

func FuzzDecodeBlob(f *testing.F) {
	f.Add(EncodeBlob([]byte("manifest")))
	f.Fuzz(func(t *testing.T, limb []byte) {
		b, err := DecodeBlob(limb)
		if err == nil && len(b) > len(limb)-4 {
			t.Fatalf("%d bytes out of a %d-byte limb", len(b), len(limb))
		}
	})
}
