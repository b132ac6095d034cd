package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Layout is the shape of a table: Buckets buckets of Slots slots, each slot
// an item of up to SlotData bytes of value.
//
// A slot is laid out as: 1 byte used (0 or 1), the 16-byte tag, the
// value's whole length (4 bytes, big-endian), SlotData bytes of the chunk
// (zero-padded). A bucket is its Slots slots, one after another.
type Layout struct {
	Slots    int `json:"slots"`
	SlotData int `json:"slot_data"`
	MaxValue int `json:"max_value"`
	Buckets  int `json:"buckets"`
}

// slotHeader: used flag, tag, length.
const slotHeader = 1 + TagSize + 4

// DefaultSlots is the fewest slots of a bucket.
const DefaultSlots = 4

// LoadFactor is the share of slots a built table fills at most.
const LoadFactor = 0.8

// ErrLayout reports a layout that cannot hold what it is asked to.
var ErrLayout = errors.New("kv: invalid layout")

// SlotBytes is the size of one slot.
func (l Layout) SlotBytes() int { return slotHeader + l.SlotData }

// BucketBytes is the size of one bucket: one record of the PIR database.
func (l Layout) BucketBytes() int { return l.Slots * l.SlotBytes() }

// Chunks is how many items a value of n bytes takes (at least one: an
// empty value is stored too).
func (l Layout) Chunks(n int) int { return max(1, (n+l.SlotData-1)/l.SlotData) }

// MaxChunks is how many items the longest value takes, and so how many
// chunks every lookup reads.
func (l Layout) MaxChunks() int { return l.Chunks(l.MaxValue) }

// Queries is the number of bucket queries of every lookup.
func (l Layout) Queries() int { return Choices * l.MaxChunks() }

// Validate checks a layout (read from a manifest) before use; maxBucket is
// the largest bucket the PIR database can hold.
func (l Layout) Validate(maxBucket int) error {
	if l.Slots < 1 || l.SlotData < 1 || l.MaxValue < 0 || l.Buckets < 0 || l.BucketBytes() > maxBucket || l.MaxValue > MaxValueLimit {
		return fmt.Errorf("%w: %d slots of %d bytes, values up to %d bytes, buckets of at most %d bytes", ErrLayout, l.Slots, l.SlotData, l.MaxValue, maxBucket)
	}
	return nil
}

// MaxValueLimit bounds the value size a layout may state (16 MiB).
const MaxValueLimit = 16 << 20

// NewLayout chooses a layout for values of up to maxValue bytes whose
// buckets, overhead bytes added (the seal's tag), are records of at most
// maxRecord bytes: slots as large as the value, or the largest four fit
// in a record (slotData, if positive, overrides); then as many slots as
// fill the power-of-two column four take. An LWE answer is a whole column
// whatever the record, and the scan reads every column's every byte, so
// slack in the column is paid by every query.
func NewLayout(maxValue, maxRecord, overhead, slotData int) (Layout, error) {
	l := Layout{Slots: DefaultSlots, MaxValue: maxValue}
	maxBucket := maxRecord - overhead
	largest := maxBucket/DefaultSlots - slotHeader
	switch {
	case slotData > 0:
		l.SlotData = slotData
	default:
		l.SlotData = max(1, min(maxValue, largest))
	}
	if err := l.Validate(maxBucket); err != nil {
		return l, err
	}
	// The column that holds the fewest slots, filled; not a taller one:
	// the hint the device keeps and evaluates per query grows with rows.
	col := max(64, 1<<bits.Len(uint(DefaultSlots*l.SlotBytes()+overhead-1)))
	l.Slots = max(DefaultSlots, (min(col, maxRecord)-overhead)/l.SlotBytes())
	return l, l.Validate(maxBucket)
}

// BucketsFor is the number of buckets a table of items items is built with.
func (l Layout) BucketsFor(items int) int {
	return max(2, int(float64(items)/(LoadFactor*float64(l.Slots)))+1)
}

// Item is one chunk of one value in a slot.
type Item struct {
	Tag  Tag
	Len  uint32 // the whole value's length
	Data []byte // this chunk (at most SlotData bytes; shorter is zero-padded)
}

// encodeSlot writes item it into slot dst (SlotBytes long).
func encodeSlot(dst []byte, it *Item) {
	clear(dst)
	if it == nil {
		return
	}
	dst[0] = 1
	copy(dst[1:], it.Tag[:])
	binary.BigEndian.PutUint32(dst[1+TagSize:], it.Len)
	copy(dst[slotHeader:], it.Data)
}

// ErrBucket reports a bucket that is not a bucket of the layout (a
// corrupt table: buckets are sealed, so only a bug makes one).
var ErrBucket = errors.New("kv: malformed bucket")

// DecodeBucket returns the items of bucket b (their Data alias b).
func (l Layout) DecodeBucket(b []byte) ([]Item, error) {
	if len(b) != l.BucketBytes() {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBucket, len(b), l.BucketBytes())
	}
	var out []Item
	for s := range l.Slots {
		slot := b[s*l.SlotBytes() : (s+1)*l.SlotBytes()]
		switch slot[0] {
		case 0:
			continue
		case 1:
		default:
			return nil, fmt.Errorf("%w: slot %d flag %d", ErrBucket, s, slot[0])
		}
		it := Item{Len: binary.BigEndian.Uint32(slot[1+TagSize:]), Data: slot[slotHeader:]}
		copy(it.Tag[:], slot[1:])
		if int64(it.Len) > int64(l.MaxValue) {
			return nil, fmt.Errorf("%w: slot %d holds a value of %d bytes (at most %d)", ErrBucket, s, it.Len, l.MaxValue)
		}
		out = append(out, it)
	}
	return out, nil
}

// Split cuts value of key into its items.
func (l Layout) Split(h *Hasher, key, value []byte) []Item {
	n := l.Chunks(len(value))
	out := make([]Item, n)
	for j := range out {
		out[j] = Item{Tag: h.Tag(key, j), Len: uint32(len(value)), Data: value[min(len(value), j*l.SlotData):min(len(value), (j+1)*l.SlotData)]}
	}
	return out
}

// Assemble rebuilds a value from the buckets a lookup read: found[j] is
// chunk j's item (nil if absent). found[0] nil: the key is not there.
func (l Layout) Assemble(found []*Item) ([]byte, bool, error) {
	if len(found) == 0 || found[0] == nil {
		return nil, false, nil
	}
	n := int(found[0].Len)
	if n > l.MaxValue {
		return nil, false, fmt.Errorf("%w: a value of %d bytes (at most %d)", ErrBucket, n, l.MaxValue)
	}
	chunks := l.Chunks(n)
	if chunks > len(found) {
		return nil, false, fmt.Errorf("%w: a value of %d chunks, %d read", ErrBucket, chunks, len(found))
	}
	out := make([]byte, 0, n)
	for j := range chunks {
		it := found[j]
		if it == nil || int(it.Len) != n {
			return nil, false, fmt.Errorf("%w: chunk %d of a %d-byte value is missing", ErrBucket, j, n)
		}
		out = append(out, it.Data[:min(l.SlotData, n-j*l.SlotData)]...)
	}
	return out, true, nil
}
