package store

import (
	"bytes"
	"crypto/sha3"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// testLayout is small so that objects span many pages and channels.
var testLayout = layout.Layout{Channels: 3, PageSize: 64}

// content is the deterministic payload of version v of an object: a SHAKE128
// stream of (name, v), cut into limbs.
func content(name string, v uint64, sh Shape) [][]byte {
	x := sha3.NewSHAKE128()
	x.Write([]byte(name))
	x.Write(binary.LittleEndian.AppendUint64(nil, v))
	out := make([][]byte, sh.NumLimbs())
	for i := range out {
		out[i] = make([]byte, sh.LimbBytes())
		x.Read(out[i])
	}
	return out
}

// shapeFor picks a small shape from v (1–3 polys, 1–4 limbs, limbs of
// 40–640 bytes: 1–10 pages of 64 bytes, mostly with a partial last page).
func shapeFor(v uint64) Shape {
	sizes := []struct{ logN, word uint8 }{{3, 5}, {4, 4}, {5, 3}, {6, 5}, {7, 5}, {5, 13}}
	sz := sizes[(v/12)%uint64(len(sizes))]
	return Shape{Polys: 1 + int(v%3), Limbs: 1 + int((v/3)%4), LogN: sz.logN, WordSize: sz.word}
}

func mustOpen(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, testLayout)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func mustPut(t testing.TB, s *Store, name string, v uint64) Generation {
	t.Helper()
	sh := shapeFor(v)
	g, err := s.Put(name, KindCiphertext, sh, content(name, v, sh))
	if err != nil {
		t.Fatalf("Put(%q, v%d): %v", name, v, err)
	}
	return g
}

// checkContent verifies that the object holds version v.
func checkContent(s *Store, name string, v uint64) error {
	info, limbs, err := s.Get(name)
	if err != nil {
		return err
	}
	sh := shapeFor(v)
	if info.Shape != sh {
		return fmt.Errorf("%q: shape %s, want %s (v%d)", name, info.Shape, sh, v)
	}
	want := content(name, v, sh)
	for i := range want {
		if !bytes.Equal(limbs[i], want[i]) {
			return fmt.Errorf("%q: limb %d differs from v%d", name, i, v)
		}
	}
	return nil
}
