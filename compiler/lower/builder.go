package lower

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
)

// builder assembles one mProgram: it allocates SRAM limb slots (reusing
// released ones), interns config-table entries and collects instructions.
type builder struct {
	cfg     isa.Config
	code    []isa.Instr
	free    []int
	next    int
	scalars map[uint64]int
	gal     map[uint64]int
	bases   map[string]int
}

func newBuilder(logN int, moduli []uint64) *builder {
	return &builder{
		cfg:     isa.Config{LogN: logN, Moduli: moduli},
		scalars: map[uint64]int{},
		gal:     map[uint64]int{},
		bases:   map[string]int{},
	}
}

// alloc returns a free SRAM slot.
func (b *builder) alloc() isa.Addr {
	if n := len(b.free); n > 0 {
		s := b.free[n-1]
		b.free = b.free[:n-1]
		return isa.Slot(isa.SpaceSRAM, s)
	}
	b.next++
	return isa.Slot(isa.SpaceSRAM, b.next-1)
}

// allocRun returns k consecutive fresh SRAM slots (BCONV operands).
func (b *builder) allocRun(k int) []isa.Addr {
	s := make([]isa.Addr, k)
	for i := range s {
		s[i] = isa.Slot(isa.SpaceSRAM, b.next+i)
	}
	b.next += k
	return s
}

func (b *builder) release(as ...isa.Addr) {
	for _, a := range as {
		b.free = append(b.free, a.Index())
	}
}

func (b *builder) scalar(v uint64) isa.Addr { return isa.Imm(isa.Intern(b.scalars, &b.cfg.Scalars, v)) }

func (b *builder) galois(g uint64) isa.Addr { return isa.Imm(isa.Intern(b.gal, &b.cfg.Galois, g)) }

func (b *builder) basis(from, to []uint8) isa.Addr {
	key := fmt.Sprint(from, to)
	i, ok := b.bases[key]
	if !ok {
		i = len(b.cfg.Bases)
		b.cfg.Bases = append(b.cfg.Bases, isa.Basis{From: from, To: to})
		b.bases[key] = i
	}
	return isa.Imm(i)
}

func (b *builder) emit(in isa.Instr) { b.code = append(b.code, in) }

// Element-wise helpers: m is the modulus index.
func (b *builder) op(op isa.Opcode, m int, flags isa.Flags, a, x, out isa.Addr) {
	b.emit(isa.Instr{Op: op, Mod: uint8(m), Flags: flags, A: a, B: x, Out: out})
}

func (b *builder) ntt(m int, a, out isa.Addr)  { b.op(isa.OpNTT, m, 0, a, 0, out) }
func (b *builder) intt(m int, a, out isa.Addr) { b.op(isa.OpINTT, m, 0, a, 0, out) }

func (b *builder) program() (*isa.Program, error) {
	b.cfg.SRAMSlots = b.next
	p := &isa.Program{Config: b.cfg, Code: b.code}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("lower: generated an invalid program: %w", err)
	}
	return p, nil
}
