package isa

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// InstrSize is the encoded size of one instruction.
const InstrSize = 16

// Binary program layout (little endian):
//
//	"MPRG" | version u16 | logN u8 | 0 u8
//	nModuli u16 | nScalars u32 | nGalois u32 | nBases u16 | sramSlots u32 | edramSlots u32 | nInstr u32
//	moduli u64… | scalars u64… | galois u64… | bases (nFrom u8, nTo u8, from…, to…)…
//	instructions (16 bytes each) | CRC-32C of everything before it (u32)
const (
	magic   = "MPRG"
	version = 1
	// header bytes before the variable tables
	headerSize = 4 + 2 + 2 + 2 + 4 + 4 + 2 + 4 + 4 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode appends the 16-byte encoding of in to dst.
func (in Instr) Encode(dst []byte) []byte {
	var b [InstrSize]byte
	b[0] = byte(in.Op)
	b[1] = in.Mod
	binary.LittleEndian.PutUint16(b[2:], uint16(in.Flags))
	binary.LittleEndian.PutUint32(b[4:], uint32(in.A))
	binary.LittleEndian.PutUint32(b[8:], uint32(in.B))
	binary.LittleEndian.PutUint32(b[12:], uint32(in.Out))
	return append(dst, b[:]...)
}

// DecodeInstr decodes one instruction from the first 16 bytes of b.
func DecodeInstr(b []byte) (Instr, error) {
	if len(b) < InstrSize {
		return Instr{}, fmt.Errorf("isa: truncated instruction: %d of %d bytes", len(b), InstrSize)
	}
	return Instr{
		Op:    Opcode(b[0]),
		Mod:   b[1],
		Flags: Flags(binary.LittleEndian.Uint16(b[2:])),
		A:     Addr(binary.LittleEndian.Uint32(b[4:])),
		B:     Addr(binary.LittleEndian.Uint32(b[8:])),
		Out:   Addr(binary.LittleEndian.Uint32(b[12:])),
	}, nil
}

// MarshalBinary encodes the program.
func (p *Program) MarshalBinary() ([]byte, error) {
	c := &p.Config
	if len(c.Moduli) > 0xFFFF || len(c.Bases) > 0xFFFF {
		return nil, errors.New("isa: config tables too large to encode")
	}
	b := make([]byte, 0, headerSize+8*(len(c.Moduli)+len(c.Scalars)+len(c.Galois))+InstrSize*len(p.Code)+4)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint16(b, version)
	b = append(b, byte(c.LogN), 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(c.Moduli)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Scalars)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Galois)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(c.Bases)))
	b = binary.LittleEndian.AppendUint32(b, uint32(c.SRAMSlots))
	b = binary.LittleEndian.AppendUint32(b, uint32(c.EDRAMSlots))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Code)))
	for _, tab := range [][]uint64{c.Moduli, c.Scalars, c.Galois} {
		for _, v := range tab {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	for _, bs := range c.Bases {
		if len(bs.From) > 255 || len(bs.To) > 255 {
			return nil, errors.New("isa: basis too large to encode")
		}
		b = append(b, byte(len(bs.From)), byte(len(bs.To)))
		b = append(b, bs.From...)
		b = append(b, bs.To...)
	}
	for _, in := range p.Code {
		b = in.Encode(b)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// reader consumes bytes with bounds checks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.err = fmt.Errorf("isa: truncated program: %s needs %d bytes at offset %d, %d left", what, n, r.off, len(r.b)-r.off)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8(what string) uint8 {
	if s := r.take(1, what); s != nil {
		return s[0]
	}
	return 0
}
func (r *reader) u16(what string) uint16 {
	if s := r.take(2, what); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}
func (r *reader) u32(what string) uint32 {
	if s := r.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *reader) u64s(n int, what string) []uint64 {
	s := r.take(8*n, what)
	if s == nil {
		return nil
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(s[8*i:])
	}
	return v
}

// UnmarshalBinary decodes a program and validates it. Malformed input —
// wrong magic or version, truncation, a bad checksum, trailing bytes or an
// invalid program — is an error naming what is wrong.
func (p *Program) UnmarshalBinary(data []byte) error {
	if len(data) < headerSize+4 {
		return fmt.Errorf("isa: truncated program: %d bytes, header needs %d", len(data), headerSize+4)
	}
	if string(data[:4]) != magic {
		return fmt.Errorf("isa: not an mProgram (magic %q)", data[:4])
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return fmt.Errorf("isa: program checksum mismatch (stored %08x, computed %08x)", sum, got)
	}
	r := &reader{b: body, off: 4}
	if v := r.u16("version"); v != version {
		return fmt.Errorf("isa: unsupported mProgram version %d (want %d)", v, version)
	}
	var q Program
	c := &q.Config
	c.LogN = int(r.u8("logN"))
	r.u8("pad")
	nMod := int(r.u16("moduli count"))
	nSc := int(r.u32("scalar count"))
	nGal := int(r.u32("galois count"))
	nBas := int(r.u16("basis count"))
	c.SRAMSlots = int(r.u32("sram slots"))
	c.EDRAMSlots = int(r.u32("edram slots"))
	nIn := int(r.u32("instruction count"))
	if r.err != nil {
		return r.err
	}
	// Counts are checked against the bytes present before allocating.
	rest := len(body) - r.off
	if nSc > rest/8 || nGal > rest/8 || nMod > rest/8 || nIn > rest/InstrSize {
		return fmt.Errorf("isa: truncated program: tables declare more entries than %d bytes hold", rest)
	}
	c.Moduli = r.u64s(nMod, "moduli")
	c.Scalars = r.u64s(nSc, "scalars")
	c.Galois = r.u64s(nGal, "galois elements")
	if nBas > rest/2 {
		return fmt.Errorf("isa: truncated program: %d bases declared", nBas)
	}
	for i := 0; i < nBas && r.err == nil; i++ {
		nf, nt := int(r.u8("basis size")), int(r.u8("basis size"))
		from := r.take(nf, "basis from")
		to := r.take(nt, "basis to")
		c.Bases = append(c.Bases, Basis{From: append([]uint8(nil), from...), To: append([]uint8(nil), to...)})
	}
	code := r.take(nIn*InstrSize, "instructions")
	if r.err != nil {
		return r.err
	}
	if r.off != len(body) {
		return fmt.Errorf("isa: %d trailing bytes after the instructions", len(body)-r.off)
	}
	q.Code = make([]Instr, nIn)
	for i := range q.Code {
		q.Code[i], _ = DecodeInstr(code[i*InstrSize:])
	}
	if err := q.Validate(); err != nil {
		return err
	}
	*p = q
	return nil
}
