package isa

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Text form (one directive or instruction per line, ';' starts a comment):
//
//	.logn 12
//	.moduli 1099511922689 1099512004609
//	.scalars 7 11
//	.galois 5 8191
//	.basis 0 -> 1 2
//	.slots sram=64 edram=16
//	ntt m0 sram[3] -> sram[4]
//	modmul.plain.scalar m1 sram[3], #0 -> sram[5]
//	automorph m0 sram[1], #0 -> sram[2]
//	bconv sram[10], #0 -> sram[20]
//	ld.key m1 nand[5:3] -> edram[0]
//	st m0 sram[1] -> dram[2:0]
//	lwemac sram[2], sram[0:5] -> sram[1]

var flagNames = []struct {
	f    Flags
	name string
}{{FlagScalarB, "scalar"}, {FlagPlain, "plain"}, {FlagCenter, "center"}, {FlagKey, "key"}, {FlagExact, "exact"}}

// String returns the operand in assembly syntax.
func (a Addr) String() string {
	switch a.Space() {
	case SpaceSRAM, SpaceEDRAM:
		return fmt.Sprintf("%s[%d]", a.Space(), a.Index())
	case SpaceDRAM, SpaceNAND:
		return fmt.Sprintf("%s[%d:%d]", a.Space(), a.Object(), a.Limb())
	case SpaceImm:
		return fmt.Sprintf("#%d", a.Index())
	}
	return fmt.Sprintf("?%#x", uint32(a))
}

// hasMod reports whether op's text form names a modulus: BCONV takes its
// moduli from the basis, LWEMAC works modulo 2^32.
func hasMod(op Opcode) bool { return op != OpBConv && op != OpLWEMAC }

// wordsString prints LWEMAC's B operand: space[slot:group].
func wordsString(a Addr) string {
	return fmt.Sprintf("%s[%d:%d]", a.Space(), a.Object(), a.Limb())
}

func hasB(op Opcode) bool {
	switch op {
	case OpNTT, OpINTT, OpLD, OpST:
		return false
	}
	return true
}

// String returns the instruction in assembly syntax.
func (in Instr) String() string {
	var sb strings.Builder
	sb.WriteString(in.Op.String())
	for _, f := range flagNames {
		if in.Flags&f.f != 0 {
			sb.WriteString("." + f.name)
		}
	}
	if hasMod(in.Op) {
		fmt.Fprintf(&sb, " m%d", in.Mod)
	}
	fmt.Fprintf(&sb, " %v", in.A)
	switch {
	case in.Op == OpLWEMAC && (in.B.Space() == SpaceSRAM || in.B.Space() == SpaceEDRAM):
		fmt.Fprintf(&sb, ", %s", wordsString(in.B))
	case hasB(in.Op):
		fmt.Fprintf(&sb, ", %v", in.B)
	}
	fmt.Fprintf(&sb, " -> %v", in.Out)
	return sb.String()
}

func joinU64(v []uint64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(s, " ")
}

func joinU8(v []uint8) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, " ")
}

// Disassemble writes the program in text form; Assemble reads it back to an
// identical program.
func Disassemble(w io.Writer, p *Program) error {
	bw := bufio.NewWriter(w)
	c := &p.Config
	fmt.Fprintf(bw, ".logn %d\n.moduli %s\n", c.LogN, joinU64(c.Moduli))
	if len(c.Scalars) > 0 {
		fmt.Fprintf(bw, ".scalars %s\n", joinU64(c.Scalars))
	}
	if len(c.Galois) > 0 {
		fmt.Fprintf(bw, ".galois %s\n", joinU64(c.Galois))
	}
	for _, b := range c.Bases {
		fmt.Fprintf(bw, ".basis %s -> %s\n", joinU8(b.From), joinU8(b.To))
	}
	fmt.Fprintf(bw, ".slots sram=%d edram=%d\n", c.SRAMSlots, c.EDRAMSlots)
	for _, in := range p.Code {
		fmt.Fprintln(bw, in.String())
	}
	return bw.Flush()
}

// Assemble parses the text form and validates the result.
func Assemble(r io.Reader) (*Program, error) {
	p := &Program{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, ';'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		var err error
		if text[0] == '.' {
			err = p.directive(text)
		} else {
			var in Instr
			in, err = parseInstr(text)
			p.Code = append(p.Code, in)
		}
		if err != nil {
			return nil, fmt.Errorf("isa: line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("isa: read: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func parseU64s(fields []string) ([]uint64, error) {
	v := make([]uint64, len(fields))
	for i, f := range fields {
		x, err := strconv.ParseUint(f, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", f)
		}
		v[i] = x
	}
	return v, nil
}

func parseU8s(fields []string) ([]uint8, error) {
	v := make([]uint8, len(fields))
	for i, f := range fields {
		x, err := strconv.ParseUint(f, 10, 8)
		if err != nil {
			return nil, fmt.Errorf("bad modulus index %q", f)
		}
		v[i] = uint8(x)
	}
	return v, nil
}

func (p *Program) directive(text string) error {
	fields := strings.Fields(text)
	c := &p.Config
	var err error
	switch fields[0] {
	case ".logn":
		if len(fields) != 2 {
			return fmt.Errorf(".logn takes one number")
		}
		c.LogN, err = strconv.Atoi(fields[1])
	case ".moduli":
		c.Moduli, err = parseU64s(fields[1:])
	case ".scalars":
		c.Scalars, err = parseU64s(fields[1:])
	case ".galois":
		c.Galois, err = parseU64s(fields[1:])
	case ".basis":
		arrow := -1
		for i, f := range fields {
			if f == "->" {
				arrow = i
			}
		}
		if arrow < 0 {
			return fmt.Errorf(".basis needs FROM… -> TO…")
		}
		var b Basis
		if b.From, err = parseU8s(fields[1:arrow]); err != nil {
			return err
		}
		if b.To, err = parseU8s(fields[arrow+1:]); err != nil {
			return err
		}
		c.Bases = append(c.Bases, b)
	case ".slots":
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			n, perr := strconv.Atoi(v)
			if !ok || perr != nil || n < 0 {
				return fmt.Errorf("bad slot count %q", f)
			}
			switch k {
			case "sram":
				c.SRAMSlots = n
			case "edram":
				c.EDRAMSlots = n
			default:
				return fmt.Errorf("unknown memory %q", k)
			}
		}
	default:
		return fmt.Errorf("unknown directive %s", fields[0])
	}
	if err != nil {
		return fmt.Errorf("%s: %w", fields[0], err)
	}
	return nil
}

func parseInstr(text string) (Instr, error) {
	var in Instr
	head, rest, _ := strings.Cut(text, " ")
	parts := strings.Split(head, ".")
	found := false
	for op := OpNTT; op < opCount; op++ {
		if parts[0] == op.String() {
			in.Op, found = op, true
		}
	}
	if !found {
		return in, fmt.Errorf("unknown instruction %q", parts[0])
	}
	for _, f := range parts[1:] {
		ok := false
		for _, fn := range flagNames {
			if f == fn.name {
				in.Flags |= fn.f
				ok = true
			}
		}
		if !ok {
			return in, fmt.Errorf("unknown flag .%s", f)
		}
	}
	rest = strings.TrimSpace(rest)
	if hasMod(in.Op) {
		m, r, _ := strings.Cut(rest, " ")
		if !strings.HasPrefix(m, "m") {
			return in, fmt.Errorf("missing modulus operand mK")
		}
		k, err := strconv.ParseUint(m[1:], 10, 8)
		if err != nil {
			return in, fmt.Errorf("bad modulus operand %q", m)
		}
		in.Mod = uint8(k)
		rest = r
	}
	srcs, dst, ok := strings.Cut(rest, "->")
	if !ok {
		return in, fmt.Errorf("missing '-> destination'")
	}
	ops := strings.Split(srcs, ",")
	want := 1
	if hasB(in.Op) {
		want = 2
	}
	if len(ops) != want {
		return in, fmt.Errorf("%s takes %d source operand(s), got %d", in.Op, want, len(ops))
	}
	var err error
	if in.A, err = parseAddr(ops[0]); err != nil {
		return in, err
	}
	switch {
	case in.Op == OpLWEMAC:
		if in.B, err = parseWords(ops[1]); err != nil {
			return in, err
		}
	case want == 2:
		if in.B, err = parseAddr(ops[1]); err != nil {
			return in, err
		}
	}
	in.Out, err = parseAddr(dst)
	return in, err
}

// parseWords parses LWEMAC's B operand, sram[slot:group] or
// edram[slot:group].
func parseWords(s string) (Addr, error) {
	s = strings.TrimSpace(s)
	name, inner, ok := strings.Cut(s, "[")
	if !ok || !strings.HasSuffix(inner, "]") {
		return 0, fmt.Errorf("bad word-group operand %q (want sram[slot:group])", s)
	}
	o, g, ok := strings.Cut(strings.TrimSuffix(inner, "]"), ":")
	slot, err1 := strconv.ParseUint(o, 10, indexBits-LimbBits)
	group, err2 := strconv.ParseUint(g, 10, LimbBits)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad word-group operand %q (want %s[slot:group])", s, name)
	}
	for _, sp := range []Space{SpaceSRAM, SpaceEDRAM} {
		if name == sp.String() {
			return Words(sp, int(slot), int(group)), nil
		}
	}
	return 0, fmt.Errorf("word-group operand %q must be in sram or edram", s)
}

func parseAddr(s string) (Addr, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "#") {
		n, err := strconv.ParseUint(s[1:], 10, 29)
		if err != nil {
			return 0, fmt.Errorf("bad immediate %q", s)
		}
		return Imm(int(n)), nil
	}
	name, inner, ok := strings.Cut(s, "[")
	if !ok || !strings.HasSuffix(inner, "]") {
		return 0, fmt.Errorf("bad operand %q", s)
	}
	inner = strings.TrimSuffix(inner, "]")
	for sp := SpaceSRAM; sp < SpaceImm; sp++ {
		if name != sp.String() {
			continue
		}
		if sp == SpaceSRAM || sp == SpaceEDRAM {
			n, err := strconv.ParseUint(inner, 10, 29)
			if err != nil {
				return 0, fmt.Errorf("bad slot %q", s)
			}
			return Slot(sp, int(n)), nil
		}
		o, l, ok := strings.Cut(inner, ":")
		obj, err1 := strconv.ParseUint(o, 10, 17)
		limb, err2 := strconv.ParseUint(l, 10, LimbBits)
		if !ok || err1 != nil || err2 != nil {
			return 0, fmt.Errorf("bad object operand %q (want %s[obj:limb])", s, name)
		}
		return Obj(sp, int(obj), int(limb)), nil
	}
	return 0, fmt.Errorf("unknown memory space %q", name)
}
