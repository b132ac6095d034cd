package kv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestHeapQueriesIsTheMostAValueSpans(t *testing.T) {
	for _, c := range []struct{ max, payload, want int }{
		{0, 10, 1}, {1, 10, 1}, {2, 10, 2}, {10, 10, 2}, {11, 10, 2}, {12, 10, 3}, {80000, 2032, 41}, {600, 240, 4},
	} {
		h := Heap{Rows: c.payload + 16, Payload: c.payload, Columns: 1, MaxValue: c.max}
		if got := h.Queries(); got != c.want {
			t.Errorf("max %d, payload %d: %d queries, want %d", c.max, c.payload, got, c.want)
		}
		// Brute force: the most columns a value of max bytes spans at any offset.
		most := 1
		for off := range c.payload {
			if c.max > 0 {
				most = max(most, (off+c.max-1)/c.payload+1)
			}
		}
		if most != c.want {
			t.Errorf("max %d, payload %d: a value spans up to %d columns, Queries says %d", c.max, c.payload, most, c.want)
		}
	}
}

func TestBuildHeapPlanGather(t *testing.T) {
	var entries []Entry
	for i := range 50 {
		v := bytes.Repeat([]byte{byte(i)}, (i*37)%101)
		if i == 7 {
			v = bytes.Repeat([]byte{7}, 100) // the largest
		}
		entries = append(entries, Entry{Tag: Tag{byte(i)}, Value: v})
	}
	items, stream, h, err := BuildHeap(entries, 32, 16, 100)
	if err != nil {
		t.Fatal(err)
	}
	if h.Queries() != 8 || h.Columns != (len(stream)+15)/16 || h.Bytes != int64(len(stream)) {
		t.Fatalf("heap %+v, %d queries, stream of %d", h, h.Queries(), len(stream))
	}
	var cols [][]byte
	for c := range h.Columns {
		cols = append(cols, h.Column(nil, stream, c))
	}
	draws := 0
	pick := func(n int) int { draws++; return draws % n }
	for i, it := range items {
		if it.Tag != entries[i].Tag || it.Len != PointerSize {
			t.Fatalf("item %d: %+v", i, it)
		}
		p, err := DecodePointer(it.Data)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := h.Plan(&p, pick)
		if err != nil || len(plan) != h.Queries() {
			t.Fatalf("entry %d: plan %v, %v", i, plan, err)
		}
		var read [][]byte
		for _, c := range plan {
			read = append(read, cols[c])
		}
		v, err := h.Gather(p, read)
		if err != nil || !bytes.Equal(v, entries[i].Value) {
			t.Fatalf("entry %d: %d bytes (%v), want %d", i, len(v), err, len(entries[i].Value))
		}
	}
	absent, err := h.Plan(nil, pick)
	if err != nil || len(absent) != h.Queries() {
		t.Fatalf("absent key: plan %v, %v", absent, err)
	}
	for _, p := range []Pointer{{Off: uint64(h.Bytes), Len: 1}, {Off: 0, Len: 101}, {Off: 1 << 62, Len: 0}} {
		if _, err := h.Plan(&p, pick); !errors.Is(err, ErrPointer) {
			t.Errorf("pointer %+v outside the heap: %v", p, err)
		}
	}
	if _, _, _, err := BuildHeap([]Entry{{Value: make([]byte, 101)}}, 32, 16, 100); !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("a value over the maximum: %v", err)
	}
	// No entries at all: one empty column.
	if _, _, h, err := BuildHeap(nil, 32, 16, 100); err != nil || h.Columns != 1 || h.Bytes != 0 {
		t.Fatalf("empty heap %+v, %v", h, err)
	}
}

// The decoders of what a bucket (sealed, but possibly of a buggy writer)
// holds never panic, and accept only what they can serve.
func FuzzHeapPointer(f *testing.F) {
	f.Add(Pointer{Off: 5, Len: 20}.Encode(nil), uint16(16), uint16(3), uint16(100))
	f.Add([]byte{1, 2, 3}, uint16(0), uint16(0), uint16(0))
	f.Add(Pointer{Off: 1<<64 - 1, Len: 1<<32 - 1}.Encode(nil), uint16(1), uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, payload, cols, maxValue uint16) {
		p, err := DecodePointer(b)
		if err != nil {
			if len(b) == PointerSize {
				t.Fatalf("%x: %v", b, err)
			}
			return
		}
		if !bytes.Equal(p.Encode(nil), b) {
			t.Fatalf("%x decodes to %+v, which encodes otherwise", b, p)
		}
		h := Heap{Rows: int(payload) + 16, Payload: int(payload), Columns: int(cols), MaxValue: int(maxValue), Bytes: int64(payload) * int64(cols)}
		if h.Validate() != nil {
			return
		}
		first, n, err := h.Span(p)
		if err != nil {
			return
		}
		if n > h.Queries() || first+n > h.Columns || (p.Len > 0) != (n > 0) {
			t.Fatalf("%+v in %+v: columns %d+%d, %d queries", p, h, first, n, h.Queries())
		}
		read := make([][]byte, h.Queries())
		for i := range read {
			read[i] = bytes.Repeat([]byte{byte(i)}, h.Payload)
		}
		v, err := h.Gather(p, read)
		if err != nil || len(v) != int(p.Len) {
			t.Fatal(fmt.Sprint(len(v), err))
		}
	})
}
