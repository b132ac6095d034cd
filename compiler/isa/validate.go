package isa

import (
	"fmt"
)

// Validate checks that the program is well formed: a complete config, known
// opcodes and flags, operands in the right spaces and in range, modulus,
// scalar, Galois and basis indices that exist. It names the first problem.
func (p *Program) Validate() error {
	if err := p.Config.Validate(); err != nil {
		return err
	}
	for pc, in := range p.Code {
		if err := p.Config.checkInstr(in); err != nil {
			return fmt.Errorf("isa: instruction %d (%s): %w", pc, in.Op, err)
		}
	}
	return nil
}

// Validate checks the configuration header.
func (c *Config) Validate() error {
	if c.LogN < 4 || c.LogN > 17 {
		return fmt.Errorf("isa: config: logN %d outside [4, 17] (missing config?)", c.LogN)
	}
	if len(c.Moduli) == 0 {
		return fmt.Errorf("isa: config: no moduli (missing config?)")
	}
	if len(c.Moduli) > 256 {
		return fmt.Errorf("isa: config: %d moduli, at most 256", len(c.Moduli))
	}
	twoN := uint64(2) << c.LogN
	for i, q := range c.Moduli {
		if q < 3 || q >= 1<<62 || q%twoN != 1 {
			return fmt.Errorf("isa: config: modulus %d (%d) is not an NTT-friendly prime below 2^62 for N=%d", i, q, c.N())
		}
	}
	for i, g := range c.Galois {
		if g&1 == 0 || g >= twoN {
			return fmt.Errorf("isa: config: Galois element %d (%d) must be odd and below 2N", i, g)
		}
	}
	for i, b := range c.Bases {
		if len(b.From) == 0 || len(b.From) > 32 || len(b.To) == 0 {
			return fmt.Errorf("isa: config: basis %d converts %d→%d moduli (need 1–32 → ≥1)", i, len(b.From), len(b.To))
		}
		seen := map[uint8]bool{}
		for _, m := range append(append([]uint8(nil), b.From...), b.To...) {
			if int(m) >= len(c.Moduli) {
				return fmt.Errorf("isa: config: basis %d names modulus %d of %d", i, m, len(c.Moduli))
			}
			if seen[m] {
				return fmt.Errorf("isa: config: basis %d repeats modulus %d", i, m)
			}
			seen[m] = true
		}
	}
	if c.SRAMSlots < 0 || c.EDRAMSlots < 0 || c.SRAMSlots+c.EDRAMSlots == 0 {
		return fmt.Errorf("isa: config: no buffer slots")
	}
	return nil
}

func (c *Config) slot(a Addr, n int, role string) error {
	var limit int
	switch a.Space() {
	case SpaceSRAM:
		limit = c.SRAMSlots
	case SpaceEDRAM:
		limit = c.EDRAMSlots
	default:
		return fmt.Errorf("%s must be an SRAM or eDRAM slot, not %s", role, a.Space())
	}
	if a.Index()+n > limit {
		return fmt.Errorf("%s %s[%d] (+%d) out of range: %d slots", role, a.Space(), a.Index(), n, limit)
	}
	return nil
}

// words checks LWEMAC's B operand: four words of a slot that exist.
func (c *Config) words(a Addr) error {
	if s := a.Space(); s != SpaceSRAM && s != SpaceEDRAM {
		return fmt.Errorf("B must name words of an SRAM or eDRAM slot, not %s", s)
	}
	if err := c.slot(Slot(a.Space(), a.Object()), 1, "B"); err != nil {
		return err
	}
	if g := a.Limb(); 4*(g+1) > c.N() {
		return fmt.Errorf("B word group %d beyond the slot's %d words", g, c.N())
	}
	return nil
}

func (c *Config) object(a Addr, role string) error {
	if s := a.Space(); s != SpaceDRAM && s != SpaceNAND {
		return fmt.Errorf("%s must be a DRAM or NAND object, not %s", role, s)
	}
	return nil
}

func (c *Config) checkInstr(in Instr) error {
	if in.Flags&^flagMask != 0 {
		return fmt.Errorf("unknown flags %#x", uint16(in.Flags&^flagMask))
	}
	allowed := Flags(0)
	if in.Op != OpBConv && int(in.Mod) >= len(c.Moduli) {
		return fmt.Errorf("modulus index %d out of range (%d moduli)", in.Mod, len(c.Moduli))
	}
	switch in.Op {
	case OpNTT, OpINTT:
		if err := c.slot(in.A, 1, "A"); err != nil {
			return err
		}
		if in.B != 0 {
			return fmt.Errorf("unexpected B operand")
		}
	case OpModAdd, OpModSub, OpModMul, OpModMAC:
		allowed = FlagScalarB
		if in.Op == OpModMul || in.Op == OpModMAC {
			allowed |= FlagPlain
		}
		if err := c.slot(in.A, 1, "A"); err != nil {
			return err
		}
		if in.Flags&FlagScalarB != 0 {
			if in.B.Space() != SpaceImm || in.B.Index() >= len(c.Scalars) {
				return fmt.Errorf("scalar index %v out of range (%d scalars)", in.B, len(c.Scalars))
			}
			if c.Scalars[in.B.Index()] >= c.Moduli[in.Mod] {
				return fmt.Errorf("scalar %d is not reduced modulo modulus %d", in.B.Index(), in.Mod)
			}
		} else if err := c.slot(in.B, 1, "B"); err != nil {
			return err
		}
	case OpAutomorph:
		if err := c.slot(in.A, 1, "A"); err != nil {
			return err
		}
		if in.B.Space() != SpaceImm || in.B.Index() >= len(c.Galois) {
			return fmt.Errorf("Galois index %v out of range (%d elements)", in.B, len(c.Galois))
		}
		if in.A == in.Out {
			return fmt.Errorf("automorphism cannot run in place")
		}
	case OpBConv:
		allowed = FlagCenter | FlagExact
		if in.Mod != 0 {
			return fmt.Errorf("BCONV takes its moduli from the basis, modulus field must be 0")
		}
		if in.B.Space() != SpaceImm || in.B.Index() >= len(c.Bases) {
			return fmt.Errorf("basis index %v out of range (%d bases)", in.B, len(c.Bases))
		}
		b := c.Bases[in.B.Index()]
		if in.Flags&(FlagCenter|FlagExact) != 0 && len(b.From) != 1 {
			return fmt.Errorf("centered or exact lift needs a one-modulus basis, basis %d has %d", in.B.Index(), len(b.From))
		}
		if in.Flags&FlagCenter != 0 && in.Flags&FlagExact != 0 {
			return fmt.Errorf("BCONV cannot be both centered and exact")
		}
		if err := c.slot(in.A, len(b.From), "A"); err != nil {
			return err
		}
		if err := c.slot(in.Out, len(b.To), "Out"); err != nil {
			return err
		}
		if in.A.Space() == in.Out.Space() && overlap(in.A.Index(), len(b.From), in.Out.Index(), len(b.To)) {
			return fmt.Errorf("BCONV input and output ranges overlap")
		}
		return checkFlags(in.Flags, allowed)
	case OpLWEMAC:
		if in.Mod != 0 {
			return fmt.Errorf("LWEMAC works modulo 2^32, modulus field must be 0")
		}
		if err := c.slot(in.A, 1, "A"); err != nil {
			return err
		}
		if err := c.words(in.B); err != nil {
			return err
		}
	case OpLD:
		allowed = FlagKey
		if err := c.object(in.A, "A"); err != nil {
			return err
		}
		if in.B != 0 {
			return fmt.Errorf("unexpected B operand")
		}
		if err := c.slot(in.Out, 1, "Out"); err != nil {
			return err
		}
		return checkFlags(in.Flags, allowed)
	case OpST:
		if err := c.slot(in.A, 1, "A"); err != nil {
			return err
		}
		if in.B != 0 {
			return fmt.Errorf("unexpected B operand")
		}
		if err := c.object(in.Out, "Out"); err != nil {
			return err
		}
		return checkFlags(in.Flags, allowed)
	default:
		return fmt.Errorf("unknown opcode %d", uint8(in.Op))
	}
	if err := c.slot(in.Out, 1, "Out"); err != nil {
		return err
	}
	return checkFlags(in.Flags, allowed)
}

func checkFlags(f, allowed Flags) error {
	if f&^allowed != 0 {
		return fmt.Errorf("flags %#x not allowed here", uint16(f&^allowed))
	}
	return nil
}

func overlap(a, n, b, m int) bool { return a < b+m && b < a+n }

// Size returns the encoded size of the program in bytes.
func (p *Program) Size() int {
	n := headerSize + 8*(len(p.Config.Moduli)+len(p.Config.Scalars)+len(p.Config.Galois)) + InstrSize*len(p.Code) + 4
	for _, b := range p.Config.Bases {
		n += 2 + len(b.From) + len(b.To)
	}
	return n
}
