package layout

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Rule identifies a layout rule, i.e. how a descriptor maps pages to channels.
type Rule uint8

// RuleStripe is the only rule: an object's pages dealt round-robin over all
// channels in (poly, limb, page) order, in two parts (see the package doc).
const RuleStripe Rule = 1

// DescriptorSize is the encoded size of a Descriptor.
const DescriptorSize = 16

// Descriptor is the compact per-object metadata from which every page location
// is derived (instead of a page table).
//
// Encoded form, 16 bytes, little-endian:
//
//	off len field
//	0   4   Base[0]   uint32  first row of part 0 (polys [0, ceil(Polys/2)))
//	4   4   Base[1]   uint32  first row of part 1 (polys [ceil(Polys/2), Polys)); 0 when Polys == 1
//	8   2   Limbs     uint16  RNS limbs per polynomial, 1..65535
//	10  1   Polys     uint8   polynomials, 1..255
//	11  1   LogN      uint8   log2(coefficients per limb), 0..30
//	12  1   WordSize  uint8   bytes per coefficient, 1..255; limb size = WordSize << LogN ≤ 1 GiB
//	13  1   Rule      uint8   layout rule id (1 = RuleStripe)
//	14  1   Class     uint8   opaque tag for the owner (the store keeps the object kind here)
//	15  1   Check     uint8   low byte of CRC-32C (Castagnoli) of bytes 0..14
//
// The channel count and page size are not in the descriptor: they belong to
// the device's Layout, and the same descriptor read under a different Layout
// denotes different pages.
type Descriptor struct {
	Base     [2]uint32
	Limbs    uint16
	Polys    uint8
	LogN     uint8
	WordSize uint8
	Rule     Rule
	Class    uint8
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Shape returns the object's shape.
func (d Descriptor) Shape() Shape {
	return Shape{Polys: int(d.Polys), Limbs: int(d.Limbs), LogN: d.LogN, WordSize: d.WordSize}
}

// String formats d for diagnostics.
func (d Descriptor) String() string {
	return fmt.Sprintf("{base %d/%d, %s, rule %d, class %d}", d.Base[0], d.Base[1], d.Shape(), d.Rule, d.Class)
}

func (d Descriptor) validate() error {
	if d.Rule != RuleStripe {
		return fmt.Errorf("layout: descriptor has unknown layout rule %d", d.Rule)
	}
	if err := d.Shape().Validate(); err != nil {
		return fmt.Errorf("layout: descriptor: %w", err)
	}
	if d.Polys == 1 && d.Base[1] != 0 {
		return fmt.Errorf("layout: descriptor of a single-poly object has second base %d, want 0", d.Base[1])
	}
	return nil
}

// MarshalBinary encodes d in DescriptorSize bytes.
func (d Descriptor) MarshalBinary() ([]byte, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	b := make([]byte, DescriptorSize)
	d.put(b)
	return b, nil
}

// AppendBinary appends the encoding of d to b.
func (d Descriptor) AppendBinary(b []byte) ([]byte, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	var e [DescriptorSize]byte
	d.put(e[:])
	return append(b, e[:]...), nil
}

func (d Descriptor) put(b []byte) {
	binary.LittleEndian.PutUint32(b[0:], d.Base[0])
	binary.LittleEndian.PutUint32(b[4:], d.Base[1])
	binary.LittleEndian.PutUint16(b[8:], d.Limbs)
	b[10] = d.Polys
	b[11] = d.LogN
	b[12] = d.WordSize
	b[13] = uint8(d.Rule)
	b[14] = d.Class
	b[15] = uint8(crc32.Checksum(b[:15], castagnoli))
}

// UnmarshalBinary decodes a descriptor, verifying its check byte and fields.
// It does not check that the extents fit a particular Layout (Layout.Check).
func (d *Descriptor) UnmarshalBinary(b []byte) error {
	if len(b) != DescriptorSize {
		return fmt.Errorf("layout: descriptor is %d bytes, want %d", len(b), DescriptorSize)
	}
	if want := uint8(crc32.Checksum(b[:15], castagnoli)); b[15] != want {
		return fmt.Errorf("layout: descriptor check byte %#02x, want %#02x", b[15], want)
	}
	v := Descriptor{
		Base:     [2]uint32{binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:])},
		Limbs:    binary.LittleEndian.Uint16(b[8:]),
		Polys:    b[10],
		LogN:     b[11],
		WordSize: b[12],
		Rule:     Rule(b[13]),
		Class:    b[14],
	}
	if err := v.validate(); err != nil {
		return err
	}
	*d = v
	return nil
}
