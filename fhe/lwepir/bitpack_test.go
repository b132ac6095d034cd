package lwepir

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// The word-at-a-time packing writes and reads exactly the bytes of the
// bit-run one, for every width, counts that end mid-byte and mid-word,
// values at the top of their range, and it refuses what the slow one
// refuses (a field at its bound, nonzero padding).
func TestBitPackMatchesSlow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for w := 1; w <= 64; w++ {
		for _, count := range []int{0, 1, 2, 3, 7, 8, 9, 63, 100} {
			vals := make([]uint64, count)
			for i := range vals {
				vals[i] = r.Uint64() >> (64 - w)
				if i%5 == 0 {
					vals[i] = 1<<w - 1 // all ones (w = 64 included: the shift wraps)
				}
			}
			prefix := []byte{0xaa, 0x55}
			got := packBits(bytes.Clone(prefix), vals, w)
			want := packBitsSlow(bytes.Clone(prefix), vals, w)
			if !bytes.Equal(got, want) {
				t.Fatalf("w %d, %d values: packed %x, want %x", w, count, got, want)
			}
			back := make([]uint64, count)
			if err := unpackBits(got[2:], back, w, ^uint64(0), "test"); err != nil && count > 0 && w < 64 {
				t.Fatalf("w %d, %d values: %v", w, count, err)
			}
			if w < 64 {
				for i := range vals {
					if back[i] != vals[i] {
						t.Fatalf("w %d, value %d: %x, want %x", w, i, back[i], vals[i])
					}
				}
			}
			if count == 0 || w == 64 {
				continue
			}
			// A bound the largest value reaches is refused by both.
			var top uint64
			for _, v := range vals {
				top = max(top, v)
			}
			e1 := unpackBits(got[2:], back, w, top, "test")
			e2 := unpackBitsSlow(got[2:], back, w, top, "test")
			if !errors.Is(e1, ErrParams) || !errors.Is(e2, ErrParams) {
				t.Fatalf("w %d: a value at its bound: %v and %v", w, e1, e2)
			}
			if pad := len(got[2:])*8 - count*w; pad > 0 {
				bad := bytes.Clone(got[2:])
				bad[len(bad)-1] |= 0x80
				if e := unpackBits(bad, back, w, ^uint64(0), "test"); !errors.Is(e, ErrParams) {
					t.Fatalf("w %d, %d values: nonzero padding accepted", w, count)
				}
			}
		}
	}
}

// Keys made here encode from the words kept as sent to exactly the bytes
// the inverse transform of their NTT form gives, and decode back to that
// form.
func TestPackingKeysSentWords(t *testing.T) {
	p := Default()
	pr, err := p.packRing()
	if err != nil {
		t.Fatal(err)
	}
	var seed [SeedSize]byte
	s := make([]int64, p.N())
	if err := sampleTernary(s); err != nil {
		t.Fatal(err)
	}
	keys, err := genPackingKeys(p, pr, packingKeyA(pr, seed), s)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := MarshalPackingKeys(p, keys)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := MarshalPackingKeys(p, &PackingKeys{B: keys.B})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, derived) {
		t.Fatal("the words kept as sent differ from the keys' own encoding")
	}
	back, err := UnmarshalPackingKeys(p, kept)
	if err != nil {
		t.Fatal(err)
	}
	for i := range keys.B {
		if !slices.Equal(back.B[i], keys.B[i]) {
			t.Fatalf("polynomial %d does not decode to the keys made", i)
		}
	}
}
