package share

import (
	"crypto/rand"
	"crypto/sha3"
	"encoding/binary"
	"fmt"
)

// SeedSize is the PRG seed length in bytes.
const SeedSize = 32

// PRG is a SHAKE128 output stream keyed by a seed. It is not safe for
// concurrent use.
type PRG struct {
	h   *sha3.SHAKE
	buf [512]byte
	n   int // unread bytes at the end of buf
}

// NewPRG returns a PRG seeded from crypto/rand.
func NewPRG() (*PRG, error) {
	var seed [SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("share: seed PRG: %w", err)
	}
	return NewPRGFromSeed(seed[:], "rosemary/hempc/share.PRG"), nil
}

// NewPRGFromSeed returns the PRG for a seed and a domain-separation label;
// equal arguments give equal streams.
func NewPRGFromSeed(seed []byte, label string) *PRG {
	h := sha3.NewCSHAKE128(nil, []byte(label))
	h.Write(seed)
	return &PRG{h: h}
}

// Read fills p with stream bytes; it never fails.
func (g *PRG) Read(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if g.n == 0 {
			g.h.Read(g.buf[:])
			g.n = len(g.buf)
		}
		k := copy(p, g.buf[len(g.buf)-g.n:])
		g.n -= k
		p = p[k:]
	}
	return n, nil
}

// Uint64 returns 64 stream bits.
func (g *PRG) Uint64() uint64 {
	var b [8]byte
	g.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Uniform returns n uniform elements of r (exact: 2^ℓ divides 2^64).
func (g *PRG) Uniform(r Ring, n int) []uint64 {
	b := make([]byte, 8*n)
	g.Read(b)
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:]) & r.mask
	}
	return out
}

// Bits returns n uniform bits, one per byte (0 or 1).
func (g *PRG) Bits(n int) []uint8 {
	b := make([]byte, (n+7)/8)
	g.Read(b)
	out := make([]uint8, n)
	for i := range out {
		out[i] = (b[i>>3] >> (i & 7)) & 1
	}
	return out
}
