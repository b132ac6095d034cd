package edge

import (
	"crypto/rand"
	"crypto/sha3"
	"encoding/binary"
	"fmt"
)

// SeedSize is the PRNG seed length in bytes.
const SeedSize = 64

// BlockSize is the number of bytes one PRNG block yields: two SHAKE256
// rates (2 × 1088 bits), a multiple of 16 so that the binomial sampler's
// 16-byte draws never straddle blocks.
const BlockSize = 272

// Stream identifiers separate the independent streams drawn from one seed.
const (
	StreamU      uint64 = 1 // ternary u of public-key encryption
	StreamE0     uint64 = 2 // error e0
	StreamE1     uint64 = 3 // error e1
	StreamA      uint64 = 4 // uniform a of seeded symmetric encryption (public)
	StreamSecret uint64 = 5 // secret key s
	StreamKeyErr uint64 = 6 // public-key error
)

// PRNG is SHAKE256 in counter mode: block i of stream id is the first
// BlockSize bytes of SHAKE256(seed ‖ le64(id) ‖ le64(i)). Any block can be
// recomputed independently (Seek), which is what lets a server expand a
// seeded ciphertext limb by limb. The zero value is not usable; use NewPRNG.
type PRNG struct {
	h       sha3.SHAKE
	seed    [SeedSize]byte
	hdr     [16]byte
	stream  uint64
	counter uint64
	block   [BlockSize]byte
	pos     int
}

// NewSeed draws a fresh seed from crypto/rand.
func NewSeed() ([SeedSize]byte, error) {
	var s [SeedSize]byte
	if _, err := rand.Read(s[:]); err != nil {
		return s, fmt.Errorf("edge: read seed: %w", err)
	}
	return s, nil
}

// NewPRNG returns a PRNG positioned at block 0 of stream 0.
func NewPRNG(seed [SeedSize]byte) *PRNG {
	p := &PRNG{}
	p.Reseed(seed)
	return p
}

// Reseed replaces the seed and rewinds to block 0 of stream 0.
func (p *PRNG) Reseed(seed [SeedSize]byte) {
	p.seed = seed
	p.Seek(0, 0)
}

// Seed returns the current seed.
func (p *PRNG) Seed() [SeedSize]byte { return p.seed }

// Seek positions the PRNG at the start of block `block` of stream `stream`.
func (p *PRNG) Seek(stream, block uint64) {
	p.stream = stream
	p.counter = block
	p.pos = BlockSize // force a refill at the next read
}

func (p *PRNG) refill() {
	binary.LittleEndian.PutUint64(p.hdr[0:8], p.stream)
	binary.LittleEndian.PutUint64(p.hdr[8:16], p.counter)
	p.h.Reset()
	p.h.Write(p.seed[:])
	p.h.Write(p.hdr[:])
	p.h.Read(p.block[:])
	p.counter++
	p.pos = 0
}

// Read fills b with the stream's next bytes. It never fails.
func (p *PRNG) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if p.pos == BlockSize {
			p.refill()
		}
		c := copy(b[n:], p.block[p.pos:])
		p.pos += c
		n += c
	}
	return n, nil
}

// next16 returns the next 16 bytes as two little-endian words. Because
// BlockSize is a multiple of 16 and all other reads re-align (see align16),
// a 16-byte draw always lies within one block.
func (p *PRNG) next16() (lo, hi uint64) {
	if p.pos+16 > BlockSize {
		p.refill()
	}
	lo = binary.LittleEndian.Uint64(p.block[p.pos:])
	hi = binary.LittleEndian.Uint64(p.block[p.pos+8:])
	p.pos += 16
	return
}

func (p *PRNG) nextByte() byte {
	if p.pos == BlockSize {
		p.refill()
	}
	b := p.block[p.pos]
	p.pos++
	return b
}

func (p *PRNG) next8() uint64 {
	if p.pos+8 > BlockSize {
		p.refill()
	}
	v := binary.LittleEndian.Uint64(p.block[p.pos:])
	p.pos += 8
	return v
}

func (p *PRNG) next4() uint32 {
	if p.pos+4 > BlockSize {
		p.refill()
	}
	v := binary.LittleEndian.Uint32(p.block[p.pos:])
	p.pos += 4
	return v
}
