package cheetah

import (
	"bytes"
	"testing"
)

func FuzzUnmarshalCompressed(f *testing.F) {
	p := mustParams(f, PN12)
	c := &Compressed{LogN: 12, LogT: 21, D0: 30, D1: 20, C0: []uint64{1, 2, 3}, C1: make([]uint64, p.N())}
	good, err := c.MarshalBinary(p.QiBits()[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := p.UnmarshalCompressed(data)
		if err != nil {
			return
		}
		// Anything accepted re-encodes to the same bytes (canonical form up to padding bits).
		again, err := c.MarshalBinary(p.QiBits()[0])
		if err != nil {
			t.Fatalf("accepted ciphertext does not re-encode: %v", err)
		}
		if len(again) != len(data) {
			t.Fatalf("re-encoded to %d bytes from %d", len(again), len(data))
		}
		if _, err := p.UnmarshalCompressed(again); err != nil {
			t.Fatalf("re-encoding rejected: %v", err)
		}
	})
}

func FuzzUnmarshalInput(f *testing.F) {
	p := mustParams(f, PN12)
	keys := GenKeys(p)
	ct, seed, err := NewEncryptor(p, keys.SK).EncryptSeeded([]uint64{1, 2, 3}, 20)
	if err != nil {
		f.Fatal(err)
	}
	good, err := p.MarshalInput(ct, seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		ct, err := p.UnmarshalInput(data)
		if err != nil {
			return
		}
		var s [SeedSize]byte
		copy(s[:], data[inputHeader:])
		again, err := p.MarshalInput(ct, s)
		if err != nil {
			t.Fatalf("accepted ciphertext does not re-encode: %v", err)
		}
		if !bytes.Equal(again[:inputHeader+SeedSize], data[:inputHeader+SeedSize]) || len(again) != len(data) {
			t.Fatalf("re-encoding differs")
		}
	})
}
