package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func testHasher(t *testing.T) *Hasher {
	h, err := NewHasher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Every value of a built table comes back byte for byte from its two
// candidate buckets per chunk, and a key never put is in none: checked
// against a Go map over values of every length around the slot size.
func TestBuildLookupMatchesMap(t *testing.T) {
	h := testHasher(t)
	l, err := NewLayout(100, 4096, 0, 24)
	l.Slots = 4
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string][]byte{}
	var items []Item
	for i := range 500 {
		v := make([]byte, rng.IntN(101))
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		k := fmt.Sprintf("key-%d", i)
		want[k] = v
		items = append(items, l.Split(h, []byte(k), v)...)
	}
	tab, err := Build(l, items)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(key string) ([]byte, bool) {
		found := make([]*Item, tab.Layout.MaxChunks())
		for j := range found {
			tag := h.Tag([]byte(key), j)
			for _, b := range Buckets(tab.Seed, tag, tab.Layout.Buckets) {
				its, err := tab.Layout.DecodeBucket(tab.Bucket(nil, b))
				if err != nil {
					t.Fatal(err)
				}
				for x := range its {
					if its[x].Tag == tag {
						found[j] = &its[x]
					}
				}
			}
		}
		v, ok, err := tab.Layout.Assemble(found)
		if err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
	for k, v := range want {
		got, ok := lookup(k)
		if !ok || !bytes.Equal(got, v) {
			t.Fatalf("%s: got %x (%v), want %x", k, got, ok, v)
		}
	}
	for i := range 200 {
		if got, ok := lookup(fmt.Sprintf("absent-%d", i)); ok {
			t.Fatalf("absent-%d found: %x", i, got)
		}
	}
	if tab.Layout.Queries() != 2*5 {
		t.Fatalf("queries per lookup %d, want 10 (5 chunks of 24 bytes for 100-byte values)", tab.Layout.Queries())
	}
}

func TestOpsRoundTripAndBounds(t *testing.T) {
	ops := []Op{{Kind: OpPut, Key: []byte("a"), Value: []byte("xyz")}, {Kind: OpDelete, Key: []byte("b")}, {Kind: OpSet, Index: 9, Value: []byte{1, 2}}}
	b := EncodeOps(nil, ops)
	got, err := DecodeOps(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(ops) {
		t.Fatalf("round trip %v, want %v", got, ops)
	}
	for n := range len(b) {
		if _, err := DecodeOps(b[:n]); !errors.Is(err, ErrDelta) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	if _, err := DecodeOps(huge); !errors.Is(err, ErrDelta) {
		t.Fatalf("a count of 2^32-1 in 4 bytes: %v", err)
	}
	if op := LastKey(append(ops, Op{Kind: OpDelete, Key: []byte("a")}), []byte("a")); op == nil || op.Kind != OpDelete {
		t.Fatalf("LastKey: %v", op)
	}
	if op := LastIndex(ops, 9); op == nil || !bytes.Equal(op.Value, []byte{1, 2}) {
		t.Fatalf("LastIndex: %v", op)
	}
}

// Bad input fails with a named error that names the line, and Collect
// returns nothing.
func TestCollectErrorsNameTheLine(t *testing.T) {
	h := testHasher(t)
	l, _ := NewLayout(8, 4096, 16, 0)
	for _, c := range []struct {
		format Format
		header bool
		in     string
		want   error
		line   string
	}{
		{CSV, true, "k,v\na,1\nb,2\na,3\n", ErrDuplicateKey, "line 4"},
		{CSV, false, "a,1\nb,123456789\n", ErrValueTooLarge, "line 2"},
		{CSV, false, "a,1\nb,2,3\n", ErrMalformed, "line 2"},
		{CSV, false, "a,1\nb,2\n\"c,3\n", ErrMalformed, "line 3"},
		{JSONL, false, `{"key":"a","value":"1"}` + "\n" + `{"key":"b"}` + "\n", ErrMalformed, "line 2"},
		{JSONL, false, `{"key":"a","value":"1"}` + "\n\n" + `{"key":"b","value":` + "\n", ErrMalformed, "line 3"},
		{JSONL, false, `{"key":"a","value":"1"}` + "\n" + `{"key":"a","value":"2"}` + "\n", ErrDuplicateKey, "line 2"},
		{JSONL, false, `{"key":"a","value":"1","x":1}` + "\n", ErrMalformed, "line 1"},
	} {
		r, err := NewReader(strings.NewReader(c.in), c.format, c.header)
		if err != nil {
			t.Fatal(err)
		}
		items, n, err := l.Collect(r, h)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.line) || items != nil || n != 0 {
			t.Errorf("%s %q: %v (%d items), want %v naming %s", c.format, c.in, err, len(items), c.want, c.line)
		}
	}
	r, _ := NewReader(strings.NewReader("key,value\na,\"x,y\"\nb,\n"), CSV, true)
	items, n, err := l.Collect(r, h)
	if err != nil || n != 2 || len(items) != 2 {
		t.Fatalf("good CSV: %v, %d pairs, %d items", err, n, len(items))
	}
}

// A layout fills the power-of-two column its bucket (and the seal's 16
// bytes) takes: 256-byte values make 277-byte slots, seven to a 2048-byte
// column (95% full), not four (55%).
func TestLayoutPacksTheColumn(t *testing.T) {
	l, err := NewLayout(256, 8176, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.SlotData != 256 || l.Slots != 7 || l.BucketBytes()+16 > 2048 {
		t.Fatalf("layout %+v (bucket %d B)", l, l.BucketBytes())
	}
	if _, err := NewLayout(64<<10, 8176, 16, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLayout(100, 200, 16, 100); !errors.Is(err, ErrLayout) {
		t.Fatalf("slots of 100 B in 200-byte records: %v", err)
	}
}

// The delta's bound and compaction trigger: defaults, caps, and a trigger
// never past the bound.
func TestDeltaBounds(t *testing.T) {
	for _, c := range []struct{ bound, at, def, ceil, limit, due int }{
		{0, 0, 4 << 20, 32 << 20, 4 << 20, 2 << 20},
		{1 << 20, 0, 4 << 20, 32 << 20, 1 << 20, 1 << 19},
		{64 << 20, 0, 4 << 20, 32 << 20, 32 << 20, 16 << 20},
		{1 << 20, 300, 4 << 20, 32 << 20, 1 << 20, 300},
		{1 << 20, 2 << 20, 4 << 20, 32 << 20, 1 << 20, 1 << 20},
		{0, 0, 1 << 20, 1 << 20, 1 << 20, 1 << 19},
	} {
		if l, d := DeltaBounds(c.bound, c.at, c.def, c.ceil); l != c.limit || d != c.due {
			t.Errorf("DeltaBounds(%d, %d, %d, %d) = %d, %d; want %d, %d", c.bound, c.at, c.def, c.ceil, l, d, c.limit, c.due)
		}
	}
}
