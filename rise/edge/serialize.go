package edge

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Wire format of a ciphertext (little-endian):
//
//	magic "RSC1" | kind u8 (1 = full, 2 = seeded) | wordBytes u8 (4 or 8) |
//	reserved u16 | N u32 | L u32 | scale f64 | q_0..q_{L-1} u64 |
//	[seeded: seed 64 bytes] | c0 limbs | [full: c1 limbs]
//
// Each limb is N words of wordBytes bytes; wordBytes is 4 when every prime
// is below 2^32. Decoding checks every field against the context and every
// coefficient against its prime.

const (
	kindFull   = 1
	kindSeeded = 2
	headerLen  = 4 + 1 + 1 + 2 + 4 + 4 + 8
)

func (c *Context) wordBytes() int {
	for _, l := range c.limbs {
		if l.mod.Q >= 1<<32 {
			return 8
		}
	}
	return 4
}

func (c *Context) appendHeader(b []byte, kind byte, scale float64) []byte {
	b = append(b, "RSC1"...)
	b = append(b, kind, byte(c.wordBytes()), 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(c.params.N))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.limbs)))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(scale))
	for _, l := range c.limbs {
		b = binary.LittleEndian.AppendUint64(b, l.mod.Q)
	}
	return b
}

func (c *Context) appendLimbs(b []byte, v [][]uint64) []byte {
	wb := c.wordBytes()
	for _, p := range v {
		for _, x := range p {
			if wb == 4 {
				b = binary.LittleEndian.AppendUint32(b, uint32(x))
			} else {
				b = binary.LittleEndian.AppendUint64(b, x)
			}
		}
	}
	return b
}

// CiphertextSize is the encoded size of a full ciphertext in bytes.
func (c *Context) CiphertextSize() int {
	return headerLen + 8*len(c.limbs) + 2*len(c.limbs)*c.params.N*c.wordBytes()
}

// SeededCiphertextSize is the encoded size of a seeded ciphertext.
func (c *Context) SeededCiphertextSize() int {
	return headerLen + 8*len(c.limbs) + SeedSize + len(c.limbs)*c.params.N*c.wordBytes()
}

// MarshalCiphertext encodes ct.
func (c *Context) MarshalCiphertext(ct *Ciphertext) ([]byte, error) {
	if err := c.checkCiphertext(ct); err != nil {
		return nil, err
	}
	b := make([]byte, 0, c.CiphertextSize())
	b = c.appendHeader(b, kindFull, ct.Scale)
	b = c.appendLimbs(b, ct.C0)
	return c.appendLimbs(b, ct.C1), nil
}

// MarshalSeeded encodes a seeded ciphertext (the upload half).
func (c *Context) MarshalSeeded(ct *SeededCiphertext) ([]byte, error) {
	if ct == nil || len(ct.C0) != len(c.limbs) {
		return nil, fmt.Errorf("edge: seeded ciphertext shape does not match the context")
	}
	b := make([]byte, 0, c.SeededCiphertextSize())
	b = c.appendHeader(b, kindSeeded, ct.Scale)
	b = append(b, ct.Seed[:]...)
	return c.appendLimbs(b, ct.C0), nil
}

func (c *Context) parseHeader(b []byte, kind byte) (scale float64, rest []byte, err error) {
	if len(b) < headerLen {
		return 0, nil, fmt.Errorf("edge: ciphertext: %d bytes, shorter than the header", len(b))
	}
	if string(b[:4]) != "RSC1" {
		return 0, nil, fmt.Errorf("edge: ciphertext: bad magic %q", b[:4])
	}
	if b[4] != kind {
		return 0, nil, fmt.Errorf("edge: ciphertext: kind %d, want %d", b[4], kind)
	}
	if b[6] != 0 || b[7] != 0 {
		return 0, nil, fmt.Errorf("edge: ciphertext: reserved bytes not zero")
	}
	if int(b[5]) != c.wordBytes() {
		return 0, nil, fmt.Errorf("edge: ciphertext: word size %d, want %d", b[5], c.wordBytes())
	}
	n := binary.LittleEndian.Uint32(b[8:])
	l := binary.LittleEndian.Uint32(b[12:])
	if int(n) != c.params.N || int(l) != len(c.limbs) {
		return 0, nil, fmt.Errorf("edge: ciphertext: N=%d L=%d, context has N=%d L=%d", n, l, c.params.N, len(c.limbs))
	}
	scale = math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
	if !(scale >= 1) || math.IsInf(scale, 0) {
		return 0, nil, fmt.Errorf("edge: ciphertext: scale %v invalid", scale)
	}
	rest = b[headerLen:]
	if len(rest) < 8*len(c.limbs) {
		return 0, nil, fmt.Errorf("edge: ciphertext: truncated moduli")
	}
	for i, lm := range c.limbs {
		if q := binary.LittleEndian.Uint64(rest[8*i:]); q != lm.mod.Q {
			return 0, nil, fmt.Errorf("edge: ciphertext: modulus %d is %d, context has %d", i, q, lm.mod.Q)
		}
	}
	return scale, rest[8*len(c.limbs):], nil
}

func (c *Context) parseLimbs(b []byte, dst [][]uint64) ([]byte, error) {
	wb := c.wordBytes()
	need := len(c.limbs) * c.params.N * wb
	if len(b) < need {
		return nil, fmt.Errorf("edge: ciphertext: truncated coefficients (%d of %d bytes)", len(b), need)
	}
	for i, p := range dst {
		q := c.limbs[i].mod.Q
		for j := range p {
			var x uint64
			if wb == 4 {
				x = uint64(binary.LittleEndian.Uint32(b))
			} else {
				x = binary.LittleEndian.Uint64(b)
			}
			b = b[wb:]
			if x >= q {
				return nil, fmt.Errorf("edge: ciphertext: limb %d coefficient %d = %d not below q=%d", i, j, x, q)
			}
			p[j] = x
		}
	}
	return b, nil
}

// UnmarshalCiphertext decodes a full ciphertext produced by MarshalCiphertext.
func (c *Context) UnmarshalCiphertext(b []byte) (*Ciphertext, error) {
	scale, rest, err := c.parseHeader(b, kindFull)
	if err != nil {
		return nil, err
	}
	ct := c.NewCiphertext()
	ct.Scale = scale
	if rest, err = c.parseLimbs(rest, ct.C0); err != nil {
		return nil, err
	}
	if rest, err = c.parseLimbs(rest, ct.C1); err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("edge: ciphertext: %d trailing bytes", len(rest))
	}
	return ct, nil
}

// UnmarshalSeeded decodes a seeded ciphertext produced by MarshalSeeded.
func (c *Context) UnmarshalSeeded(b []byte) (*SeededCiphertext, error) {
	scale, rest, err := c.parseHeader(b, kindSeeded)
	if err != nil {
		return nil, err
	}
	if len(rest) < SeedSize {
		return nil, fmt.Errorf("edge: seeded ciphertext: truncated seed")
	}
	ct := c.NewSeededCiphertext()
	ct.Scale = scale
	copy(ct.Seed[:], rest)
	if rest, err = c.parseLimbs(rest[SeedSize:], ct.C0); err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("edge: seeded ciphertext: %d trailing bytes", len(rest))
	}
	return ct, nil
}

// Key files: "RSK1" | kind u8 (1 secret, 2 public) | N u32 | L u32 | q_i u64 |
// polys as u64 (NTT domain, standard form).

// MarshalSecretKey encodes sk.
func (c *Context) MarshalSecretKey(sk *SecretKey) []byte {
	return c.marshalKey(1, sk.s)
}

// MarshalPublicKey encodes pk.
func (c *Context) MarshalPublicKey(pk *PublicKey) []byte {
	p0, p1 := c.ExportPublicKey(pk)
	return c.marshalKey(2, append(p0, p1...))
}

func (c *Context) marshalKey(kind byte, polys [][]uint64) []byte {
	b := []byte("RSK1")
	b = append(b, kind)
	b = binary.LittleEndian.AppendUint32(b, uint32(c.params.N))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.limbs)))
	for _, l := range c.limbs {
		b = binary.LittleEndian.AppendUint64(b, l.mod.Q)
	}
	for _, p := range polys {
		for _, x := range p {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
	}
	return b
}

func (c *Context) unmarshalKey(b []byte, kind byte, npolys int) ([][]uint64, error) {
	if len(b) < 13 || string(b[:4]) != "RSK1" || b[4] != kind {
		return nil, fmt.Errorf("edge: key: bad header")
	}
	if int(binary.LittleEndian.Uint32(b[5:])) != c.params.N || int(binary.LittleEndian.Uint32(b[9:])) != len(c.limbs) {
		return nil, fmt.Errorf("edge: key: N or L does not match the context")
	}
	b = b[13:]
	if len(b) != 8*len(c.limbs)+8*npolys*len(c.limbs)*c.params.N {
		return nil, fmt.Errorf("edge: key: %d bytes, wrong length", len(b))
	}
	for i, l := range c.limbs {
		if binary.LittleEndian.Uint64(b[8*i:]) != l.mod.Q {
			return nil, fmt.Errorf("edge: key: modulus %d does not match", i)
		}
	}
	b = b[8*len(c.limbs):]
	polys := make([][]uint64, npolys*len(c.limbs))
	for i := range polys {
		polys[i] = make([]uint64, c.params.N)
		for j := range polys[i] {
			polys[i][j] = binary.LittleEndian.Uint64(b)
			b = b[8:]
		}
	}
	return polys, nil
}

// UnmarshalSecretKey decodes a key written by MarshalSecretKey.
func (c *Context) UnmarshalSecretKey(b []byte) (*SecretKey, error) {
	p, err := c.unmarshalKey(b, 1, 1)
	if err != nil {
		return nil, err
	}
	return c.ImportSecretKey(p, false)
}

// UnmarshalPublicKey decodes a key written by MarshalPublicKey.
func (c *Context) UnmarshalPublicKey(b []byte) (*PublicKey, error) {
	p, err := c.unmarshalKey(b, 2, 2)
	if err != nil {
		return nil, err
	}
	L := len(c.limbs)
	return c.ImportPublicKey(p[:L], p[L:], false)
}
