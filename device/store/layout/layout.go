package layout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/device/object"
)

// Limits of a Layout and a Shape. They follow from the field widths of the
// descriptor and the layout record.
const (
	MaxChannels  = 256             // channel files ch00 … ch255
	MinPageSize  = 64              // bytes; small pages keep tests fast
	MaxPageSize  = 1 << 24         // 16 MiB
	MaxPolys     = object.MaxPolys // one byte in the descriptor
	MaxLimbs     = object.MaxLimbs // two bytes in the descriptor
	MaxLogN      = object.MaxLogN
	MaxLimbBytes = object.MaxLimbBytes // 1 GiB per limb
	maxRows      = 1 << 32             // rows are uint32 page offsets within a channel
)

// Layout is the geometry of a device: Channels independent channels (one file
// or one flash channel each), every channel an array of PageSize-byte pages.
type Layout struct {
	Channels int // C, 1..MaxChannels
	PageSize int // P, a power of two in [MinPageSize, MaxPageSize]
}

// Validate reports whether l is a usable geometry.
func (l Layout) Validate() error {
	if l.Channels < 1 || l.Channels > MaxChannels {
		return fmt.Errorf("layout: %d channels out of range [1, %d]", l.Channels, MaxChannels)
	}
	if l.PageSize < MinPageSize || l.PageSize > MaxPageSize || l.PageSize&(l.PageSize-1) != 0 {
		return fmt.Errorf("layout: page size %d is not a power of two in [%d, %d]", l.PageSize, MinPageSize, MaxPageSize)
	}
	return nil
}

// String formats l as "C×P B".
func (l Layout) String() string {
	return fmt.Sprintf("%d channels × %d B pages", l.Channels, l.PageSize)
}

// layoutRecordSize is the size of Layout's binary form.
const layoutRecordSize = 8

// MarshalBinary encodes l in 8 bytes (little-endian):
//
//	off len field
//	0   2   magic "RL"
//	2   1   version, 1
//	3   1   log2(PageSize)
//	4   2   Channels (uint16)
//	6   2   reserved, zero
func (l Layout) MarshalBinary() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, layoutRecordSize)
	b[0], b[1], b[2] = 'R', 'L', 1
	b[3] = uint8(bits.TrailingZeros(uint(l.PageSize)))
	binary.LittleEndian.PutUint16(b[4:], uint16(l.Channels))
	return b, nil
}

// UnmarshalBinary decodes the form written by MarshalBinary and validates it.
func (l *Layout) UnmarshalBinary(b []byte) error {
	if len(b) != layoutRecordSize {
		return fmt.Errorf("layout: record is %d bytes, want %d", len(b), layoutRecordSize)
	}
	if b[0] != 'R' || b[1] != 'L' {
		return errors.New("layout: record has bad magic")
	}
	if b[2] != 1 {
		return fmt.Errorf("layout: record version %d unsupported", b[2])
	}
	if b[6] != 0 || b[7] != 0 {
		return errors.New("layout: record reserved bytes not zero")
	}
	if b[3] >= 31 {
		return fmt.Errorf("layout: log2 page size %d out of range", b[3])
	}
	v := Layout{Channels: int(binary.LittleEndian.Uint16(b[4:])), PageSize: 1 << b[3]}
	if err := v.Validate(); err != nil {
		return err
	}
	*l = v
	return nil
}

// Shape is the geometry of an object (defined with the other object
// types in package object, which clients use without the store).
type Shape = object.Shape

// PagesPerLimb is k = ceil(LimbBytes / PageSize).
func (l Layout) PagesPerLimb(s Shape) int {
	return (s.LimbBytes() + l.PageSize - 1) / l.PageSize
}

// PagesPerObject is the number of pages holding the object (Polys × Limbs × k).
func (l Layout) PagesPerObject(s Shape) int64 {
	return int64(s.NumLimbs()) * int64(l.PagesPerLimb(s))
}

// SplitPoly is the first polynomial of the descriptor's second part:
// polys [0, SplitPoly) start at Base[0], the rest at Base[1].
func SplitPoly(s Shape) int { return (s.Polys + 1) / 2 }

// partGeom describes one part of an object under RuleStripe.
type partGeom struct {
	firstPoly, polys int
	pageStart        int64 // global index of the part's first page
	phase            int64 // channel of the part's first page (pageStart mod C)
	rows             int64 // rows the part occupies on every channel
}

func (l Layout) parts(s Shape) [2]partGeom {
	k := int64(l.PagesPerLimb(s))
	c := int64(l.Channels)
	split := SplitPoly(s)
	var p [2]partGeom
	p[0] = partGeom{firstPoly: 0, polys: split}
	p[1] = partGeom{firstPoly: split, polys: s.Polys - split}
	var start int64
	for i := range p {
		pages := int64(p[i].polys) * int64(s.Limbs) * k
		p[i].pageStart = start
		p[i].phase = start % c
		if pages > 0 {
			p[i].rows = (p[i].phase + pages + c - 1) / c
		}
		start += pages
	}
	return p
}

// PartRows returns how many consecutive rows (on every channel) each of the
// two parts of an object of shape s occupies. Part 1 is empty (0 rows) when
// Polys == 1. The store allocates one extent of that many rows per part.
func (l Layout) PartRows(s Shape) [2]int64 {
	p := l.parts(s)
	return [2]int64{p[0].rows, p[1].rows}
}

// Extent is a run of consecutive rows, reserved on every channel.
type Extent struct {
	Start uint32 // first row
	Rows  uint32 // number of rows, > 0
}

// End is the row after the extent (as uint64 so that it cannot overflow).
func (e Extent) End() uint64 { return uint64(e.Start) + uint64(e.Rows) }

// Extents returns the non-empty row extents the described object occupies.
func (l Layout) Extents(d Descriptor) ([]Extent, error) {
	if err := l.Check(d); err != nil {
		return nil, err
	}
	rows := l.PartRows(d.Shape())
	var out []Extent
	for i, r := range rows {
		if r > 0 {
			out = append(out, Extent{Start: d.Base[i], Rows: uint32(r)})
		}
	}
	return out, nil
}

// Loc is the physical location of a page: a channel and the page offset
// (row) within that channel.
type Loc struct {
	Channel int
	Row     uint32
}

// NewDescriptor builds the descriptor of an object of shape s laid out under
// RuleStripe with its parts starting at rows base[0] and base[1]. Class is an
// opaque tag kept for the owner. base[1] must be zero when s has one poly.
func (l Layout) NewDescriptor(s Shape, base [2]uint32, class uint8) (Descriptor, error) {
	d := Descriptor{
		Base:     base,
		Limbs:    uint16(s.Limbs),
		Polys:    uint8(s.Polys),
		LogN:     s.LogN,
		WordSize: s.WordSize,
		Rule:     RuleStripe,
		Class:    class,
	}
	if err := s.Validate(); err != nil {
		return Descriptor{}, err
	}
	if err := l.Check(d); err != nil {
		return Descriptor{}, err
	}
	return d, nil
}

// Place lays an object of shape s out contiguously from row base: part 0 at
// base, part 1 right after it. It is the descriptor a simulator uses when it
// has no allocator, and what a store allocates on an empty device.
func (l Layout) Place(s Shape, base uint32, class uint8) (Descriptor, error) {
	if err := s.Validate(); err != nil {
		return Descriptor{}, err
	}
	rows := l.PartRows(s)
	var b [2]uint32
	b[0] = base
	if rows[1] > 0 {
		next := uint64(base) + uint64(rows[0])
		if next >= maxRows {
			return Descriptor{}, fmt.Errorf("layout: object of %s from row %d exceeds the channel's 2^32 rows", s, base)
		}
		b[1] = uint32(next)
	}
	return l.NewDescriptor(s, b, class)
}

// Check reports whether d is well formed and fits the layout (its extents
// end within the 2^32 addressable rows of a channel).
func (l Layout) Check(d Descriptor) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if err := d.validate(); err != nil {
		return err
	}
	rows := l.PartRows(d.Shape())
	for i, r := range rows {
		if uint64(d.Base[i])+uint64(r) > maxRows {
			return fmt.Errorf("layout: part %d (base row %d, %d rows) exceeds the channel's 2^32 rows", i, d.Base[i], r)
		}
	}
	return nil
}

// Locate returns where page `page` of limb `limb` of polynomial `poly` of the
// described object lives.
func (l Layout) Locate(d Descriptor, poly, limb, page int) (Loc, error) {
	if err := l.Check(d); err != nil {
		return Loc{}, err
	}
	s := d.Shape()
	k := l.PagesPerLimb(s)
	if poly < 0 || poly >= s.Polys || limb < 0 || limb >= s.Limbs || page < 0 || page >= k {
		return Loc{}, fmt.Errorf("layout: page (poly %d, limb %d, page %d) outside %s (%d pages per limb)", poly, limb, page, s, k)
	}
	return l.locate(d, l.parts(s), int64(k), poly, limb, page), nil
}

// locate is Locate without checks; parts and k must belong to d.
func (l Layout) locate(d Descriptor, p [2]partGeom, k int64, poly, limb, page int) Loc {
	part := 0
	if poly >= p[1].firstPoly && p[1].polys > 0 {
		part = 1
	}
	c := int64(l.Channels)
	n := (int64(poly)*int64(d.Limbs)+int64(limb))*k + int64(page) // global page number
	local := n - p[part].pageStart + p[part].phase                // slot within the part's rows
	return Loc{Channel: int(n % c), Row: d.Base[part] + uint32(local/c)}
}

// PageAt inverts Locate: it returns which page of the described object lives
// at (channel, row), or ok = false when that slot lies outside the object or
// is one of the few unused slots at the start or end of a part.
func (l Layout) PageAt(d Descriptor, channel int, row uint32) (poly, limb, page int, ok bool) {
	if l.Check(d) != nil || channel < 0 || channel >= l.Channels {
		return 0, 0, 0, false
	}
	s := d.Shape()
	p := l.parts(s)
	k := int64(l.PagesPerLimb(s))
	c := int64(l.Channels)
	for i := range p {
		if p[i].rows == 0 || row < d.Base[i] || int64(row-d.Base[i]) >= p[i].rows {
			continue
		}
		local := int64(row-d.Base[i])*c + int64(channel) // slot within the part
		n := local - p[i].phase + p[i].pageStart         // global page number
		if local < p[i].phase || n >= p[i].pageStart+int64(p[i].polys)*int64(s.Limbs)*k {
			return 0, 0, 0, false
		}
		g := n / k
		return int(g / int64(s.Limbs)), int(g % int64(s.Limbs)), int(n % k), true
	}
	return 0, 0, 0, false
}

// Run is the share of one limb on one channel: Count pages in consecutive
// rows starting at Row; they are the limb's pages FirstPage,
// FirstPage+Stride, FirstPage+2·Stride, … (Stride = Channels).
type Run struct {
	Channel   int
	Row       uint32
	Count     int
	FirstPage int
	Stride    int
}

// LimbRuns returns, for every channel holding pages of the limb, the run of
// consecutive rows holding them, ordered by channel. Reading the runs in
// parallel reads the whole limb.
func (l Layout) LimbRuns(d Descriptor, poly, limb int) ([]Run, error) {
	if err := l.Check(d); err != nil {
		return nil, err
	}
	s := d.Shape()
	if poly < 0 || poly >= s.Polys || limb < 0 || limb >= s.Limbs {
		return nil, fmt.Errorf("layout: limb (poly %d, limb %d) outside %s", poly, limb, s)
	}
	k := l.PagesPerLimb(s)
	p := l.parts(s)
	c := l.Channels
	runs := make([]Run, 0, min(k, c))
	for j := 0; j < k && j < c; j++ { // page j is the first page of its channel's run
		loc := l.locate(d, p, int64(k), poly, limb, j)
		runs = append(runs, Run{Channel: loc.Channel, Row: loc.Row, Count: (k - j + c - 1) / c, FirstPage: j, Stride: c})
	}
	// Sort by channel: the first pages occupy channels start..start+len-1 mod C.
	for i := 1; i < len(runs); i++ {
		for j := i; j > 0 && runs[j].Channel < runs[j-1].Channel; j-- {
			runs[j], runs[j-1] = runs[j-1], runs[j]
		}
	}
	return runs, nil
}
