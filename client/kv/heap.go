package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The heap layout (see the package doc, "Large values: an index and a
// heap"): the cuckoo table holds one Pointer a key, and the values lie one
// after another in a stream cut into columns of Payload bytes, each column
// one record of a second PIR database.

// PointerSize is the size of an encoded Pointer: the index's value.
const PointerSize = 12

// Pointer is where a value lies in the heap's stream.
type Pointer struct {
	Off uint64 // the value's first byte in the stream
	Len uint32 // its length
}

// Encode appends p to dst (PointerSize bytes: offset, then length,
// big-endian).
func (p Pointer) Encode(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, p.Off)
	return binary.BigEndian.AppendUint32(dst, p.Len)
}

// ErrPointer reports bytes that are no pointer of the heap (a corrupt
// index: buckets are sealed, so only a bug makes one).
var ErrPointer = errors.New("kv: malformed heap pointer")

// DecodePointer reads an encoded pointer (exactly PointerSize bytes).
func DecodePointer(b []byte) (Pointer, error) {
	if len(b) != PointerSize {
		return Pointer{}, fmt.Errorf("%w: %d bytes, want %d", ErrPointer, len(b), PointerSize)
	}
	return Pointer{Off: binary.BigEndian.Uint64(b), Len: binary.BigEndian.Uint32(b[8:])}, nil
}

// IndexLayout is the index's table for records of at most maxRecord bytes
// of which overhead is the seal's: slots of one pointer each, as many as
// fill the smallest power-of-two column that holds four.
func IndexLayout(maxRecord, overhead int) (Layout, error) {
	return NewLayout(PointerSize, maxRecord, overhead, PointerSize)
}

// Heap is the shape of a heap: Columns columns of Payload value bytes
// (each stored as one record of Rows bytes, its seal included), holding a
// stream of Bytes bytes; values are at most MaxValue bytes.
type Heap struct {
	Rows     int   `json:"rows"`
	Payload  int   `json:"payload"`
	Columns  int   `json:"columns"`
	Bytes    int64 `json:"bytes"`
	MaxValue int   `json:"max_value"`
}

// MaxHeapQueries bounds the columns a lookup may ask (Queries).
const MaxHeapQueries = 4096

// Validate checks a heap's shape (read from a manifest) before use.
func (h Heap) Validate() error {
	if h.Payload < 1 || h.Rows < h.Payload || h.Columns < 1 || h.Bytes < 0 || h.MaxValue < 0 || h.MaxValue > MaxValueLimit ||
		h.Bytes > int64(h.Columns)*int64(h.Payload) || h.Queries() > MaxHeapQueries {
		return fmt.Errorf("%w: heap of %d columns of %d bytes (%d stored), %d bytes used, values up to %d", ErrLayout, h.Columns, h.Payload, h.Rows, h.Bytes, h.MaxValue)
	}
	return nil
}

// Queries is how many columns every lookup asks: the most a value of
// MaxValue bytes can span, wherever it starts.
func (h Heap) Queries() int {
	if h.MaxValue <= 1 || h.Payload < 1 {
		return 1
	}
	return (h.MaxValue-2)/h.Payload + 2
}

// Span is the first column of the value p points at and how many columns
// it spans (none for an empty value); an error if p lies outside the
// stream or is longer than a value may be.
func (h Heap) Span(p Pointer) (first, n int, err error) {
	if int64(p.Len) > int64(h.MaxValue) || p.Off > uint64(h.Bytes) || uint64(p.Len) > uint64(h.Bytes)-p.Off {
		return 0, 0, fmt.Errorf("%w: %d bytes at %d of a %d-byte heap (values up to %d)", ErrPointer, p.Len, p.Off, h.Bytes, h.MaxValue)
	}
	if p.Len == 0 {
		return 0, 0, nil
	}
	P := uint64(h.Payload)
	first = int(p.Off / P)
	last := int((p.Off + uint64(p.Len) - 1) / P)
	return first, last - first + 1, nil
}

// Plan is the Queries columns a lookup asks: those p's value spans, in
// order, then columns drawn by pick (uniform in [0, n)) to make up the
// count; all drawn if p is nil (the key is absent).
func (h Heap) Plan(p *Pointer, pick func(n int) int) ([]int, error) {
	out := make([]int, 0, h.Queries())
	if p != nil {
		first, n, err := h.Span(*p)
		if err != nil {
			return nil, err
		}
		for c := first; c < first+n; c++ {
			out = append(out, c)
		}
	}
	for len(out) < h.Queries() {
		out = append(out, pick(h.Columns))
	}
	return out, nil
}

// Gather is the value p points at, from cols: the payloads of the columns
// its Span names, in order (Plan's first ones).
func (h Heap) Gather(p Pointer, cols [][]byte) ([]byte, error) {
	first, n, err := h.Span(p)
	if err != nil {
		return nil, err
	}
	if len(cols) < n {
		return nil, fmt.Errorf("%w: a value over %d columns, %d read", ErrPointer, n, len(cols))
	}
	out := make([]byte, 0, p.Len)
	off := p.Off - uint64(first)*uint64(h.Payload)
	for i := range n {
		if len(cols[i]) != h.Payload {
			return nil, fmt.Errorf("%w: column of %d bytes, want %d", ErrPointer, len(cols[i]), h.Payload)
		}
		end := min(uint64(h.Payload), off+uint64(int(p.Len)-len(out)))
		out = append(out, cols[i][off:end]...)
		off = 0
	}
	return out, nil
}

// Entry is one value of a heap being built, under its key's tag (chunk
// 0's: Tag(key, 0)).
type Entry struct {
	Tag   Tag
	Value []byte
}

// BuildHeap lays entries out one after another in a stream of columns of
// payload bytes (at least one column, zero-padded) and returns the index's
// items (one pointer a key, tagged as the entry) and the heap's shape; rows
// is the stored size of a column, recorded in the shape.
func BuildHeap(entries []Entry, rows, payload, maxValue int) ([]Item, []byte, Heap, error) {
	if payload < 1 || rows < payload {
		return nil, nil, Heap{}, fmt.Errorf("%w: columns of %d bytes, %d stored", ErrLayout, payload, rows)
	}
	var total int64
	for _, e := range entries {
		if len(e.Value) > maxValue {
			return nil, nil, Heap{}, fmt.Errorf("%w: value of %d bytes (at most %d)", ErrValueTooLarge, len(e.Value), maxValue)
		}
		total += int64(len(e.Value))
	}
	stream := make([]byte, 0, total)
	items := make([]Item, len(entries))
	for i, e := range entries {
		p := Pointer{Off: uint64(len(stream)), Len: uint32(len(e.Value))}
		stream = append(stream, e.Value...)
		items[i] = Item{Tag: e.Tag, Len: PointerSize, Data: p.Encode(nil)}
	}
	cols := max(1, (len(stream)+payload-1)/payload)
	h := Heap{Rows: rows, Payload: payload, Columns: cols, Bytes: int64(len(stream)), MaxValue: maxValue}
	return items, stream, h, h.Validate()
}

// Column is column c of stream: its payload bytes, zero-padded.
func (h Heap) Column(dst, stream []byte, c int) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, h.Payload)...)
	lo := min(len(stream), c*h.Payload)
	copy(dst[n:], stream[lo:min(len(stream), lo+h.Payload)])
	return dst
}
