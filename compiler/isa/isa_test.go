package isa

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// sample returns a small valid program using every instruction.
func sample() *Program {
	return &Program{
		Config: Config{
			LogN:       4,
			Moduli:     []uint64{97, 193, 257, 353},
			Scalars:    []uint64{5, 96},
			Galois:     []uint64{5, 31},
			Bases:      []Basis{{From: []uint8{0, 1}, To: []uint8{2, 3}}, {From: []uint8{2}, To: []uint8{0}}},
			SRAMSlots:  16,
			EDRAMSlots: 4,
		},
		Code: []Instr{
			{Op: OpLD, Mod: 0, A: Obj(SpaceDRAM, 1, 0), Out: Slot(SpaceSRAM, 0)},
			{Op: OpLD, Mod: 1, Flags: FlagKey, A: Obj(SpaceNAND, 7, 1), Out: Slot(SpaceEDRAM, 1)},
			{Op: OpINTT, Mod: 0, A: Slot(SpaceSRAM, 0), Out: Slot(SpaceSRAM, 0)},
			{Op: OpNTT, Mod: 1, A: Slot(SpaceSRAM, 1), Out: Slot(SpaceSRAM, 2)},
			{Op: OpModAdd, Mod: 0, A: Slot(SpaceSRAM, 0), B: Slot(SpaceSRAM, 1), Out: Slot(SpaceSRAM, 3)},
			{Op: OpModSub, Mod: 0, Flags: FlagScalarB, A: Slot(SpaceSRAM, 0), B: Imm(0), Out: Slot(SpaceSRAM, 3)},
			{Op: OpModMul, Mod: 1, Flags: FlagPlain | FlagScalarB, A: Slot(SpaceSRAM, 0), B: Imm(1), Out: Slot(SpaceSRAM, 3)},
			{Op: OpModMAC, Mod: 1, A: Slot(SpaceSRAM, 0), B: Slot(SpaceEDRAM, 1), Out: Slot(SpaceSRAM, 4)},
			{Op: OpAutomorph, Mod: 2, A: Slot(SpaceSRAM, 0), B: Imm(1), Out: Slot(SpaceSRAM, 5)},
			{Op: OpBConv, A: Slot(SpaceSRAM, 6), B: Imm(0), Out: Slot(SpaceSRAM, 8)},
			{Op: OpBConv, Flags: FlagCenter, A: Slot(SpaceSRAM, 10), B: Imm(1), Out: Slot(SpaceSRAM, 11)},
			{Op: OpST, Mod: 0, A: Slot(SpaceSRAM, 3), Out: Obj(SpaceDRAM, 2, 0)},
			{Op: OpLWEMAC, A: Slot(SpaceSRAM, 3), B: Words(SpaceEDRAM, 2, 3), Out: Slot(SpaceSRAM, 12)},
		},
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	p := sample()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != p.Size() {
		t.Fatalf("Size()=%d, encoded %d", p.Size(), len(b))
	}
	var q Program
	if err := q.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, &q) {
		t.Fatalf("round trip differs:\n%+v\n%+v", p, q)
	}
	// Exact bytes of one instruction.
	in := Instr{Op: OpModMul, Mod: 3, Flags: FlagPlain, A: Slot(SpaceSRAM, 1), B: Slot(SpaceEDRAM, 2), Out: Obj(SpaceDRAM, 1, 2)}
	want := []byte{5, 3, 2, 0, 1, 0, 0, 0, 2, 0, 0, 0x20, 2, 0x10, 0, 0x40}
	if got := in.Encode(nil); !bytes.Equal(got, want) {
		t.Fatalf("encoding %x, want %x", got, want)
	}
}

func TestTextRoundTrip(t *testing.T) {
	p := sample()
	var buf bytes.Buffer
	if err := Disassemble(&buf, p); err != nil {
		t.Fatal(err)
	}
	q, err := Assemble(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("text round trip differs:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "modmul.scalar.plain m1 sram[0], #1 -> sram[3]") ||
		!strings.Contains(buf.String(), "\nlwemac sram[3], edram[2:3] -> sram[12]\n") {
		t.Fatalf("unexpected syntax:\n%s", buf.String())
	}
}

func TestValidatorRejects(t *testing.T) {
	cases := []struct {
		name string
		mut  func(p *Program)
		want string
	}{
		{"missing config", func(p *Program) { p.Config = Config{} }, "missing config"},
		{"unknown opcode", func(p *Program) { p.Code[0].Op = 99 }, "unknown opcode"},
		{"bad modulus index", func(p *Program) { p.Code[2].Mod = 9 }, "modulus index 9 out of range"},
		{"slot out of range", func(p *Program) { p.Code[3].Out = Slot(SpaceSRAM, 16) }, "out of range"},
		{"wrong space", func(p *Program) { p.Code[3].A = Obj(SpaceDRAM, 1, 1) }, "must be an SRAM or eDRAM slot"},
		{"scalar index", func(p *Program) { p.Code[5].B = Imm(7) }, "scalar index"},
		{"scalar not reduced", func(p *Program) { p.Config.Scalars[1] = 1000 }, "not reduced"},
		{"galois index", func(p *Program) { p.Code[8].B = Imm(2) }, "Galois index"},
		{"basis index", func(p *Program) { p.Code[9].B = Imm(5) }, "basis index"},
		{"center multi", func(p *Program) { p.Code[9].Flags = FlagCenter }, "one-modulus basis"},
		{"center and exact", func(p *Program) { p.Code[10].Flags = FlagCenter | FlagExact }, "both centered and exact"},
		{"bad flag", func(p *Program) { p.Code[3].Flags = 1 << 12 }, "unknown flags"},
		{"flag not allowed", func(p *Program) { p.Code[3].Flags = FlagPlain }, "not allowed"},
		{"not ntt prime", func(p *Program) { p.Config.Moduli[0] = 101 }, "NTT-friendly"},
		{"even galois", func(p *Program) { p.Config.Galois[0] = 4 }, "odd"},
		{"automorph in place", func(p *Program) { p.Code[8].Out = p.Code[8].A }, "in place"},
		{"ld to object", func(p *Program) { p.Code[0].Out = Obj(SpaceNAND, 1, 1) }, "SRAM or eDRAM"},
		{"bconv overlap", func(p *Program) { p.Code[9].Out = Slot(SpaceSRAM, 7) }, "overlap"},
		// N = 16 words: groups 0…3.
		{"lwemac group", func(p *Program) { p.Code[12].B = Words(SpaceEDRAM, 2, 4) }, "word group 4 beyond"},
		{"lwemac slot", func(p *Program) { p.Code[12].B = Words(SpaceEDRAM, 4, 0) }, "out of range"},
		{"lwemac words in dram", func(p *Program) { p.Code[12].B = Obj(SpaceDRAM, 2, 0) }, "SRAM or eDRAM slot"},
		{"lwemac modulus", func(p *Program) { p.Code[12].Mod = 1 }, "modulo 2^32"},
		{"lwemac flag", func(p *Program) { p.Code[12].Flags = FlagPlain }, "not allowed"},
		{"lwemac A object", func(p *Program) { p.Code[12].A = Obj(SpaceNAND, 1, 0) }, "must be an SRAM or eDRAM slot"},
	}
	for _, c := range cases {
		p := sample()
		c.mut(p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want error containing %q", c.name, err, c.want)
		}
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	good, _ := sample().MarshalBinary()
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXX"), good[4:]...),
		"truncated": good[:len(good)-9],
		"checksum":  append(append([]byte(nil), good[:len(good)-1]...), good[len(good)-1]^1),
	}
	for name, b := range cases {
		var p Program
		if err := p.UnmarshalBinary(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := DecodeInstr(make([]byte, 5)); err == nil {
		t.Error("truncated instruction accepted")
	}
	for _, src := range []string{"frob m0 sram[0] -> sram[1]", ".logn x", "ntt m0 sram[0]", "ntt sram[0] -> sram[1]", "ntt m0 disk[0] -> sram[1]",
		".logn 4\n.moduli 97\n.slots sram=4\nlwemac m0 sram[0], sram[1:0] -> sram[2]", // no modulus operand
		".logn 4\n.moduli 97\n.slots sram=4\nlwemac sram[0], sram[1] -> sram[2]",      // B names a group
		".logn 4\n.moduli 97\n.slots sram=4\nlwemac sram[0], dram[1:0] -> sram[2]"} {
		if _, err := Assemble(strings.NewReader(src)); err == nil {
			t.Errorf("assembled %q", src)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	good, _ := sample().MarshalBinary()
	f.Add(good)
	f.Add(good[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Program
		if err := p.UnmarshalBinary(b); err != nil {
			return
		}
		// Anything accepted is valid and re-encodes to the same bytes.
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		again, err := p.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs")
		}
	})
}

func FuzzAssemble(f *testing.F) {
	var buf bytes.Buffer
	_ = Disassemble(&buf, sample())
	f.Add(buf.String())
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Assemble(strings.NewReader(src))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Disassemble(&out, p); err != nil {
			t.Fatal(err)
		}
		q, err := Assemble(&out)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("text round trip failed: %v", err)
		}
	})
}

// LWEMAC's exact encoding: opcode 11, B packs slot 2 and group 3 of eDRAM
// (space 1) as slot<<12 | group; and its text form assembles back.
func TestLWEMACEncoding(t *testing.T) {
	in := Instr{Op: OpLWEMAC, A: Slot(SpaceSRAM, 3), B: Words(SpaceEDRAM, 2, 3), Out: Slot(SpaceSRAM, 12)}
	want := []byte{11, 0, 0, 0, 3, 0, 0, 0, 0x03, 0x20, 0, 0x20, 12, 0, 0, 0}
	if got := in.Encode(nil); !bytes.Equal(got, want) {
		t.Fatalf("encoding %x, want %x", got, want)
	}
	if in.B.Object() != 2 || in.B.Limb() != 3 || in.B.Space() != SpaceEDRAM {
		t.Fatalf("B decodes to %v slot %d group %d", in.B.Space(), in.B.Object(), in.B.Limb())
	}
	p, err := Assemble(strings.NewReader(".logn 4\n.moduli 97\n.slots sram=16 edram=4\nlwemac sram[3], edram[2:3] -> sram[12]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Code) != 1 || p.Code[0] != in {
		t.Fatalf("assembled %+v, want %+v", p.Code, in)
	}
}
