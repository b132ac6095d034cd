package isa

import "fmt"

// Opcode identifies an instruction.
type Opcode uint8

// The instruction set.
const (
	OpInvalid Opcode = iota
	OpNTT
	OpINTT
	OpModAdd
	OpModSub
	OpModMul
	OpModMAC
	OpAutomorph
	OpBConv
	OpLD
	OpST
	// OpLWEMAC is the first dimension of an LWE PIR scan (see doc.go): a
	// byte × 32-bit multiply-accumulate modulo 2^32, no modular reduction.
	OpLWEMAC
	opCount
)

var opNames = [...]string{"invalid", "ntt", "intt", "modadd", "modsub", "modmul", "modmac", "automorph", "bconv", "ld", "st", "lwemac"}

func (o Opcode) String() string {
	if o < opCount {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Flags modify an instruction.
type Flags uint16

// Instruction flags.
const (
	// FlagScalarB: B is an index into Config.Scalars (MODADD/MODSUB/MODMUL/MODMAC).
	FlagScalarB Flags = 1 << iota
	// FlagPlain: MODMUL/MODMAC compute A·B mod q instead of A·B·2^-64 mod q.
	FlagPlain
	// FlagCenter: BCONV from one modulus with Lattigo's centered lift.
	FlagCenter
	// FlagKey: LD of key material (the simulator keeps keys in eDRAM).
	FlagKey
	// FlagExact: BCONV from one modulus as an exact lift x mod p (rescaling),
	// without the floating-point overflow estimate.
	FlagExact
	flagMask = FlagScalarB | FlagPlain | FlagCenter | FlagKey | FlagExact
)

// Space is a memory space an address names.
type Space uint8

// Memory spaces.
const (
	SpaceSRAM  Space = iota // on-chip buffer, limb slots
	SpaceEDRAM              // scratchpad, limb slots
	SpaceDRAM               // device LPDDR objects (inputs from the host land here)
	SpaceNAND               // objects stored on flash
	SpaceImm                // not an address: an immediate/table index
	spaceCount
)

var spaceNames = [...]string{"sram", "edram", "dram", "nand", "imm"}

func (s Space) String() string {
	if s < spaceCount {
		return spaceNames[s]
	}
	return fmt.Sprintf("space(%d)", uint8(s))
}

// Addr is a 32-bit operand: 3 bits of space, 29 bits of index.
type Addr uint32

const (
	indexBits = 29
	indexMask = 1<<indexBits - 1
	// LimbBits is the width of the limb field of an object address.
	LimbBits = 12
	// MaxObjects is the number of distinct objects an address can name.
	MaxObjects = 1 << (indexBits - LimbBits)
)

// Slot returns the address of limb slot i in SRAM or eDRAM.
func Slot(s Space, i int) Addr { return Addr(uint32(s)<<indexBits | uint32(i)&indexMask) }

// Obj returns the address of limb `limb` of object obj in DRAM or NAND.
func Obj(s Space, obj, limb int) Addr {
	return Addr(uint32(s)<<indexBits | uint32(obj)<<LimbBits | uint32(limb)&(1<<LimbBits-1))
}

// Words returns the address of the four 32-bit words 4·group … 4·group+3
// of slot `slot` in SRAM or eDRAM (LWEMAC's B operand), packed as an object
// address is: slot<<LimbBits | group.
func Words(s Space, slot, group int) Addr {
	return Addr(uint32(s)<<indexBits | uint32(slot)<<LimbBits | uint32(group)&(1<<LimbBits-1))
}

// MaxLWEGroups is how many four-word groups LWEMAC's B operand can name:
// a query slot of at most 4·MaxLWEGroups = 2^14 words.
const MaxLWEGroups = 1 << LimbBits

// Imm returns an immediate operand (a table index).
func Imm(i int) Addr { return Addr(uint32(SpaceImm)<<indexBits | uint32(i)&indexMask) }

// Space returns the address's memory space.
func (a Addr) Space() Space { return Space(a >> indexBits) }

// Index returns the slot index (or immediate) of the address.
func (a Addr) Index() int { return int(a & indexMask) }

// Object returns the object number of a DRAM/NAND address.
func (a Addr) Object() int { return int(a&indexMask) >> LimbBits }

// Limb returns the limb number of a DRAM/NAND address.
func (a Addr) Limb() int { return int(a & (1<<LimbBits - 1)) }

// Instr is one mProgram instruction; it encodes to 16 bytes.
type Instr struct {
	Op    Opcode
	Mod   uint8 // modulus index
	Flags Flags
	A, B  Addr
	Out   Addr
}

// Basis is a base-conversion table entry: limbs over the moduli From are
// converted to the moduli To (indices into Config.Moduli).
type Basis struct {
	From, To []uint8
}

// Config is the paper's config(): everything an mProgram refers to by index.
type Config struct {
	LogN    int
	Moduli  []uint64 // all RNS primes the program uses (Q then P)
	Scalars []uint64 // scalar constants (each used with an instruction's modulus)
	Galois  []uint64 // Galois elements for AUTOMORPH
	Bases   []Basis  // base-conversion tables for BCONV

	SRAMSlots  int // limb slots of the on-chip buffer
	EDRAMSlots int // limb slots of the scratchpad
}

// N returns the ring degree.
func (c *Config) N() int { return 1 << c.LogN }

// Intern returns v's index in table (a Config's Scalars or Galois),
// appending v the first time it is seen so that the table holds each value
// once; index maps the values already in table to their positions. The
// lowering and the compiler's segment merge build their tables with it.
func Intern(index map[uint64]int, table *[]uint64, v uint64) int {
	i, ok := index[v]
	if !ok {
		i = len(*table)
		*table = append(*table, v)
		index[v] = i
	}
	return i
}

// Program is an mProgram: a configuration and its code.
type Program struct {
	Config Config
	Code   []Instr
}
