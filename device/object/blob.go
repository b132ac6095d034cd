package object

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A blob object (KindBlob) holds opaque bytes in one limb of 1-byte words:
// a 4-byte little-endian length, the bytes, zero padding to a power of two
// of at least 16 words. Manifests and access lists are blobs; one Put
// replaces one atomically.

// EncodeBlob is the limb of a blob holding b.
func EncodeBlob(b []byte) []byte {
	logN := max(4, bits.Len(uint(len(b)+4-1)))
	limb := make([]byte, 1<<logN)
	binary.LittleEndian.PutUint32(limb, uint32(len(b)))
	copy(limb[4:], b)
	return limb
}

// DecodeBlob returns the bytes a blob's limb holds.
func DecodeBlob(limb []byte) ([]byte, error) {
	if len(limb) < 4 {
		return nil, fmt.Errorf("object: a blob of %d bytes has no length", len(limb))
	}
	n := binary.LittleEndian.Uint32(limb)
	if int64(n) > int64(len(limb)-4) {
		return nil, fmt.Errorf("object: a blob of %d bytes claims %d", len(limb), n)
	}
	return limb[4 : 4+n], nil
}

// BlobShape is the shape of a blob whose limb has n bytes.
func BlobShape(n int) Shape {
	return Shape{Polys: 1, Limbs: 1, LogN: uint8(bits.Len(uint(n)) - 1), WordSize: 1}
}
