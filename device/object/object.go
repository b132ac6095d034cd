// Package object holds the few types that describe a stored object —
// its kind, shape and generation — shared by the store that keeps objects
// (device/store), the device contract that names them (device/api) and
// the clients that write them. It depends on nothing, so a client can
// speak of objects without linking the store.
package object

import (
	"errors"
	"fmt"
)

// Kind says what an object holds. The store does not interpret it.
type Kind uint8

// Object kinds.
const (
	KindCiphertext Kind = 1
	KindPlaintext  Kind = 2
	KindKey        Kind = 3
	// KindBlob holds opaque bytes (one limb of 1-byte words): a database's
	// manifest, say.
	KindBlob Kind = 4
)

func (k Kind) String() string {
	switch k {
	case KindCiphertext:
		return "ciphertext"
	case KindPlaintext:
		return "plaintext"
	case KindKey:
		return "key"
	case KindBlob:
		return "blob"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Generation numbers the published versions of objects; it increases with
// every Put across the whole store and is never 0 for a published object.
type Generation uint64

// Limits of a Shape. They follow from the field widths of the store's
// object descriptor.
const (
	MaxPolys     = 255   // one byte in the descriptor
	MaxLimbs     = 65535 // two bytes in the descriptor
	MaxLogN      = 30
	MaxLimbBytes = 1 << 30 // 1 GiB per limb
)

// Shape is the geometry of an object: Polys polynomials of Limbs RNS limbs,
// each limb 2^LogN coefficients of WordSize bytes. The store treats limbs as
// opaque byte strings of LimbBytes() bytes.
type Shape struct {
	Polys    int
	Limbs    int
	LogN     uint8
	WordSize uint8
}

// LimbBytes is the size of one limb in bytes (WordSize << LogN).
func (s Shape) LimbBytes() int { return int(s.WordSize) << s.LogN }

// NumLimbs is the number of limbs of the object (Polys × Limbs).
func (s Shape) NumLimbs() int { return s.Polys * s.Limbs }

// Bytes is the payload size of the object.
func (s Shape) Bytes() int64 { return int64(s.NumLimbs()) * int64(s.LimbBytes()) }

// String formats s as "polys×limbs×bytes".
func (s Shape) String() string {
	return fmt.Sprintf("%d polys × %d limbs × %d B", s.Polys, s.Limbs, s.LimbBytes())
}

// Validate reports whether s fits the descriptor's fields. (Its messages
// say "layout", the store layer that first defined the limits.)
func (s Shape) Validate() error {
	switch {
	case s.Polys < 1 || s.Polys > MaxPolys:
		return fmt.Errorf("layout: %d polys out of range [1, %d]", s.Polys, MaxPolys)
	case s.Limbs < 1 || s.Limbs > MaxLimbs:
		return fmt.Errorf("layout: %d limbs out of range [1, %d]", s.Limbs, MaxLimbs)
	case s.LogN > MaxLogN:
		return fmt.Errorf("layout: log N %d out of range [0, %d]", s.LogN, MaxLogN)
	case s.WordSize < 1:
		return errors.New("layout: word size is zero")
	case int64(s.WordSize)<<s.LogN > MaxLimbBytes:
		return fmt.Errorf("layout: limb of %d B exceeds %d B", int64(s.WordSize)<<s.LogN, MaxLimbBytes)
	}
	return nil
}
