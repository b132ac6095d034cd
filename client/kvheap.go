package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"time"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// The heap layout of a keyword database (package client/kv's doc, "Large
// values: an index and a heap"): an index — the cuckoo table, one pointer a
// key — and a heap — the values one after another, cut into columns, each
// column one sealed record of a second LWE database whose records are a
// whole column each. Both are stored for the packed mode only (the packer,
// no hint diagonals) and queried packed. A lookup asks the index both
// candidate buckets of every key, then the heap exactly Heap.Queries()
// columns a key: the value's, then random ones.

// KVLayoutKind chooses a keyword database's layout.
type KVLayoutKind string

// Keyword database layouts.
const (
	// KVAuto (the default): KVHeapLayout where a value can be longer than
	// one slot (SlotData not set and MaxValue over the largest slot four
	// fit in a record) and the device answers packed queries; else
	// KVCuckoo. A cluster always builds KVCuckoo.
	KVAuto KVLayoutKind = ""
	// KVCuckoo: values cut into chunks of SlotData bytes in the cuckoo
	// table's buckets; a lookup asks 2·⌈MaxValue/SlotData⌉ buckets.
	KVCuckoo KVLayoutKind = "cuckoo"
	// KVHeapLayout: an index of pointers and a heap of whole columns; a
	// lookup asks 2 buckets and ⌈(MaxValue−1)/column⌉ + 1 columns, packed.
	KVHeapLayout KVLayoutKind = "heap"
)

// ParseKVLayout reads a layout name ("" or "auto" is KVAuto).
func ParseKVLayout(s string) (KVLayoutKind, error) {
	switch KVLayoutKind(s) {
	case "", "auto":
		return KVAuto, nil
	case KVCuckoo:
		return KVCuckoo, nil
	case KVHeapLayout:
		return KVHeapLayout, nil
	}
	return "", fmt.Errorf("client: unknown kv layout %q (auto, cuckoo or heap)", s)
}

// KVHeap describes a keyword database's heap: its index's table (the
// buckets of KVPart.PIRPart: one pointer a key), the heap's shape and the
// heap's own LWE database (records: columns of Heap.Payload bytes).
type KVHeap struct {
	Index kv.Layout `json:"index"`
	Heap  kv.Heap   `json:"heap"`
	PIR   PIRPart   `json:"pir"`
	// AutoRows: the heap's column height is chosen at each write from the
	// data (defaultHeapRows; KVOptions.HeapRows was 0). A database made
	// before keeps the height it has.
	AutoRows bool `json:"auto_rows,omitempty"`
}

// ErrPackedDevice: a heap-layout database is queried in the packed mode,
// which the device does not speak.
var ErrPackedDevice = errors.New("client: the device does not answer packed LWE queries (wire version below api.PackedWireVersion)")

// kvHeapPart is the heap part CreateKV writes for opt (values up to
// maxValue bytes): the index's table and the heap's column size.
func kvHeapPart(opt KVOptions, p lwepir.Params, pname string, maxValue int) (*KVHeap, error) {
	idx, err := kv.IndexLayout(p.HintSlots(), seal.Overhead)
	if err != nil {
		return nil, err
	}
	rows := opt.HeapRows
	if rows == 0 {
		rows = p.N() // until a write chooses from the data (AutoRows)
	}
	if rows <= seal.Overhead || rows > p.HintSlots() || rows&(rows-1) != 0 {
		return nil, fmt.Errorf("%w: heap columns of %d rows (a power of two, %d to %d)", kv.ErrLayout, rows, 2*seal.Overhead, p.HintSlots())
	}
	h := kv.Heap{Rows: rows, Payload: rows - seal.Overhead, Columns: 1, MaxValue: maxValue}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	out := &KVHeap{Index: idx, Heap: h, PIR: PIRPart{Scheme: SchemeLWE, LWEParams: pname, RecordSize: h.Payload}, AutoRows: opt.HeapRows == 0}
	out.PIR.StoreMode(LWEPacked) // written PackedOnly: the packer, no diagonals
	return out, nil
}

// tallHeapColumns is the count of N-row columns a value must be able to
// span for the heap's default columns to be two packs (2N rows) tall.
const tallHeapColumns = 16

// defaultHeapRows is the heap's column height for values up to maxValue
// totalling data bytes, where KVOptions.HeapRows was 0: N (one pack), or
// 2N where the largest value spans tallHeapColumns columns of N or more
// and the data outweighs the pack that taller columns add. A lookup asks
// one query a column its values can span, and each query costs a scan of
// the heap, a query vector and a set of packing keys, so halving the
// queries pays where they are many; the packing costs the same (one pack
// a 2N-row column's half), and the packer stores one more pack (32 MiB at
// the default parameters), which a small data set should not carry.
// Measured on issue 40's 55 MB keyword set (80 KB values): 23 queries a
// lookup instead of 43, a fresh lookup 0.20–0.26 s instead of 0.28–0.34,
// LookupMany of 16 keys 2.0–2.3 s instead of 3.0–3.1, 1.75 MB up instead
// of 5.35, stored 2.44× the data instead of 1.82× (BENCHMARKS.md).
func defaultHeapRows(p lwepir.Params, maxValue int, data int64) int {
	n := p.N()
	if 2*n > p.HintSlots() || maxValue < tallHeapColumns*(n-seal.Overhead) {
		return n
	}
	one, err := lwepir.PackerStoredBytes(p, lwepir.Shape{Rows: n, Cols: n, RecordSize: n})
	if err != nil || data < one {
		return n
	}
	return 2 * n
}

// heapPrefix is the prefix of generation in's heap objects: inside the
// generation's, so that they go with it.
func heapPrefix(in *Info) string { return genPrefix(in) + "/heap" }

// heapSealer seals generation in's heap columns: a key of its own (the
// database's name and "/heap"), so that no index bucket opens as a column.
func (c *Client) heapSealer(in *Info) (*seal.Sealer, error) {
	var salt seal.Salt
	if len(in.Salt) != len(salt) {
		return nil, fmt.Errorf("client: %s: manifest holds no valid sealing salt", in.Name)
	}
	copy(salt[:], in.Salt)
	return seal.NewSealer(in.keys.gen, in.Name+"/heap", in.Generation, salt)
}

// loadKVHeap reads every pair of r (checked as loadKV checks) and writes
// generation in in the heap layout.
func (c *Client) loadKVHeap(ctx context.Context, in *Info, r io.Reader, opt LoadOptions) error {
	rd, h, err := kvInput(in, r, opt)
	if err != nil {
		return err
	}
	seen := map[kv.Tag]int{}
	var entries []kv.Entry
	for {
		pr, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := in.KV.Layout.Check(pr); err != nil {
			return err
		}
		t := h.Tag(pr.Key, 0)
		if first, ok := seen[t]; ok {
			return fmt.Errorf("%w: line %d: key %q is also on line %d", kv.ErrDuplicateKey, pr.Line, truncKey(pr.Key), first)
		}
		seen[t] = pr.Line
		entries = append(entries, kv.Entry{Tag: t, Value: pr.Value})
	}
	in.KV.Entries = len(entries)
	return c.writeKVHeap(ctx, in, entries)
}

// writeKVHeap lays entries out as generation in: the heap's columns, then
// the index's buckets, both sealed under a fresh salt, packed only.
func (c *Client) writeKVHeap(ctx context.Context, in *Info, entries []kv.Entry) error {
	p, err := in.lweParams()
	if err != nil {
		return err
	}
	hp := in.KV.Heap
	rows, payload := hp.Heap.Rows, hp.Heap.Payload
	if hp.AutoRows {
		var data int64
		for _, e := range entries {
			data += int64(len(e.Value))
		}
		rows = defaultHeapRows(p, hp.Heap.MaxValue, data)
		payload = rows - seal.Overhead
	}
	items, stream, heap, err := kv.BuildHeap(entries, rows, payload, hp.Heap.MaxValue)
	if err != nil {
		return err
	}
	t, err := kv.Build(hp.Index, items)
	if err != nil {
		return err
	}
	salt, err := seal.NewSalt()
	if err != nil {
		return err
	}
	in.Salt = Hex(bytes.Clone(salt[:]))
	hsl, err := c.heapSealer(in)
	if err != nil {
		return err
	}
	var col []byte
	hshape, hseed, hbytes, err := c.writePackedLWE(ctx, heapPrefix(in), p, hsl, heap.Rows, heap.Columns, func(i int) []byte {
		col = heap.Column(col[:0], stream, i)
		return col
	})
	if err != nil {
		return fmt.Errorf("heap: %w", err)
	}
	isl, err := c.sealer(ctx, in)
	if err != nil {
		return err
	}
	l := t.Layout
	var bucket []byte
	ishape, iseed, ibytes, err := c.writePackedLWE(ctx, genPrefix(in), p, isl, l.BucketBytes()+seal.Overhead, l.Buckets, func(b int) []byte {
		bucket = t.Bucket(bucket[:0], b)
		return bucket
	})
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	hp.Index, hp.Heap, hp.PIR.RecordSize = l, heap, heap.Payload
	hp.PIR.Rows, hp.PIR.Cols, hp.PIR.Seed = hshape.Rows, hshape.Cols, Hex(hseed[:])
	in.KV.Rows, in.KV.Cols, in.KV.Seed = ishape.Rows, ishape.Cols, Hex(iseed[:])
	in.KV.StoreMode(LWEPacked)
	in.KV.RecordSize = l.BucketBytes()
	in.KV.HashSeed = Hex(bytes.Clone(t.Seed[:]))
	in.Records, in.Bytes = l.Buckets, hbytes+ibytes
	return nil
}

// writePackedLWE writes count records (record(i), sealed by sl under
// index i: stored bytes each) as an LWE generation under prefix, stored
// for the packed mode only; it returns the shape, the public seed and the
// bytes stored.
func (c *Client) writePackedLWE(ctx context.Context, prefix string, p lwepir.Params, sl *seal.Sealer, stored, count int, record func(i int) []byte) (lwepir.Shape, [lwepir.SeedSize]byte, int64, error) {
	var seed [lwepir.SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return lwepir.Shape{}, seed, 0, err
	}
	l, err := session.NewSizedLWELoader(session.DeviceSink(c.dev), prefix, p, stored, seed, count, 0)
	if err != nil {
		return lwepir.Shape{}, seed, 0, err
	}
	l.PackedOnly()
	var sealed []byte
	for i := range count {
		sealed = sl.Seal(sealed[:0], uint64(i), record(i))
		if len(sealed) != stored {
			return lwepir.Shape{}, seed, 0, fmt.Errorf("record %d: %d bytes sealed, want %d", i, len(sealed), stored)
		}
		if err := l.Add(ctx, sealed); err != nil {
			return lwepir.Shape{}, seed, 0, err
		}
	}
	shape, err := l.Finish(ctx)
	if err != nil {
		return shape, seed, 0, err
	}
	return shape, seed, l.Written() + l.PackerWritten(), nil
}

// heapParts are what a lookup of a heap-layout generation uses.
type heapParts struct {
	p              lwepir.Params
	idx            kv.Layout
	heap           kv.Heap
	seed           [32]byte
	isess, hsess   *session.LWESession
	isl, hsl       *seal.Sealer
	ishape, hshape lwepir.Shape
}

// heapOpen checks generation in's heap part and opens its two packed
// sessions (cached per generation).
func (c *Client) heapOpen(ctx context.Context, in *Info) (*heapParts, error) {
	hp := in.KV.Heap
	bad := func(what string) error {
		return fmt.Errorf("client: %s: manifest holds no valid kv heap (%s)", in.Name, what)
	}
	if err := hp.Index.Validate(in.pir().RecordSize); err != nil || hp.Index.Buckets < 1 || hp.Index.Buckets != in.Records || hp.Index.SlotData != kv.PointerSize {
		return nil, bad("index")
	}
	if err := hp.Heap.Validate(); err != nil || hp.PIR.RecordSize != hp.Heap.Payload {
		return nil, bad("heap")
	}
	c.mu.Lock()
	wire := c.wire
	c.mu.Unlock()
	if wire < api.PackedWireVersion {
		return nil, fmt.Errorf("%w: %s (wire %d)", ErrPackedDevice, c.deviceName(), wire)
	}
	p, err := in.lweParams()
	if err != nil {
		return nil, err
	}
	if need := packingWire(p.Packing); wire < need {
		return nil, fmt.Errorf("%w: %s (wire %d; packing version %d needs %d)", ErrPackedDevice, c.deviceName(), wire, p.Packing, need)
	}
	seed, err := in.hashSeed()
	if err != nil {
		return nil, err
	}
	out := &heapParts{p: p, idx: hp.Index, heap: hp.Heap, seed: seed}
	out.ishape = lwepir.Shape{Rows: in.KV.Rows, Cols: in.KV.Cols, RecordSize: in.StoredRecordSize()}
	out.hshape = lwepir.Shape{Rows: hp.PIR.Rows, Cols: hp.PIR.Cols, RecordSize: hp.Heap.Rows}
	if err := out.ishape.Validate(p); err != nil || out.ishape.Records() < in.Records {
		return nil, bad("index shape")
	}
	if err := out.hshape.Validate(p); err != nil || out.hshape.Records() < hp.Heap.Columns {
		return nil, bad("heap shape")
	}
	open := func(name, prefix string, shape lwepir.Shape, pseed Hex) (*session.LWESession, error) {
		var s [lwepir.SeedSize]byte
		if len(pseed) != len(s) {
			return nil, bad("seed")
		}
		copy(s[:], pseed)
		key := *in
		key.Name = in.Name + name
		return cachedSession(c, c.lsessions, &key, func() (*session.LWESession, error) {
			return c.packedSession(prefix, p, shape, s)
		})
	}
	if out.isess, err = open("#index", genPrefix(in), out.ishape, in.KV.Seed); err != nil {
		return nil, err
	}
	if out.hsess, err = open("#heap", heapPrefix(in), out.hshape, hp.PIR.Seed); err != nil {
		return nil, err
	}
	if out.isl, err = c.sealer(ctx, in); err != nil {
		return nil, err
	}
	if out.hsl, err = c.heapSealer(in); err != nil {
		return nil, err
	}
	return out, nil
}

// lookupHeap is lookupIn for the heap layout: round one asks both
// candidate buckets of every key of the index, round two Heap.Queries()
// columns a key of the heap — the value's columns, then random ones (all
// random for a key not in the index). So the device sees the same two
// rounds of the same packed queries, in the same numbers, for every key;
// the delta, read whole, then overrides what the generation said.
func (c *Client) lookupHeap(ctx context.Context, in *Info, keys [][]byte) ([]KVLookup, error) {
	start := time.Now()
	ops, err := c.deltaOps(ctx, in)
	if err != nil {
		return nil, err
	}
	h, err := in.kvHasher()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if len(k) > kv.MaxKey {
			return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrKeyTooLarge, len(k), kv.MaxKey)
		}
	}
	hq := in.KV.Heap.Heap.Queries()
	out := make([]KVLookup, len(keys))
	var cost queryCost
	if in.Generation > 0 {
		hp, err := c.heapOpen(ctx, in)
		if err != nil {
			return nil, err
		}
		tags := make([]kv.Tag, len(keys))
		var buckets []int
		for i, k := range keys {
			tags[i] = h.Tag(k, 0)
			buckets = append(buckets, hp.idx.Candidates(hp.seed, tags[i:i+1])...)
		}
		recs, c1, err := c.fetchSealed(ctx, in, "index bucket", hp.isess, hp.isl, buckets)
		if err != nil {
			return nil, err
		}
		ptrs := make([]*kv.Pointer, len(keys))
		var cols []int
		for i := range keys {
			pb, found, err := hp.idx.Find(recs[i*kv.Choices:(i+1)*kv.Choices], tags[i:i+1])
			if err != nil {
				return nil, fmt.Errorf("client: lookup %s: %w", in.Name, err)
			}
			if found {
				p, err := kv.DecodePointer(pb)
				if err != nil {
					return nil, fmt.Errorf("client: lookup %s: %w", in.Name, err)
				}
				ptrs[i] = &p
			}
			plan, err := hp.heap.Plan(ptrs[i], mrand.IntN)
			if err != nil {
				return nil, fmt.Errorf("client: lookup %s: %w", in.Name, err)
			}
			cols = append(cols, plan...)
		}
		colRecs, c2, err := c.fetchSealed(ctx, in, "heap column", hp.hsess, hp.hsl, cols)
		if err != nil {
			return nil, err
		}
		cost = queryCost{query: c1.query + c2.query, answer: c1.answer + c2.answer, device: c1.device + c2.device}
		for i := range keys {
			if ptrs[i] == nil {
				continue
			}
			v, err := hp.heap.Gather(*ptrs[i], colRecs[i*hq:(i+1)*hq])
			if err != nil {
				return nil, fmt.Errorf("client: lookup %s: %w", in.Name, err)
			}
			out[i].Found, out[i].Value = true, v
		}
	}
	manifest := manifestSize(in)
	for i, k := range keys {
		r := &out[i]
		r.Key, r.Queries, r.ManifestBytes, r.DeltaBytes = k, kv.Choices+hq, manifest, in.Delta.storedBytes()
		if op := kv.LastKey(ops, k); op != nil {
			r.Found, r.Value = op.Kind == kv.OpPut, op.Value
		}
		if !r.Found {
			r.Value = nil
		}
	}
	if n := int64(len(keys)); n > 0 {
		for i := range out {
			out[i].QueryBytes, out[i].AnswerBytes = cost.query/n, cost.answer/n
			out[i].Seconds = time.Since(start).Seconds()
		}
	}
	return out, nil
}

// fetchSealed reads records indices of a packed session s, opened by sl,
// with manyInFlight queries in flight. An answer that does not decode or
// open (altered, of another record, generation or database) fails the
// call with ErrTampered, naming what was asked (what, its index).
func (c *Client) fetchSealed(ctx context.Context, in *Info, what string, s *session.LWESession, sl *seal.Sealer, indices []int) ([][]byte, queryCost, error) {
	return fetchOpened(ctx, s, sl, indices, func(k int, err error, failed bool) error {
		switch {
		case failed && errors.Is(err, ErrTampered):
			return fmt.Errorf("client: lookup %s: %s %d (generation %d) from %s: %w", in.Name, what, indices[k], in.Generation, c.deviceName(), err)
		case failed:
			return fmt.Errorf("client: lookup %s: %s %d (generation %d) from %s: %w: the device's answer did not decode (%v)",
				in.Name, what, indices[k], in.Generation, c.deviceName(), ErrTampered, err)
		}
		return fmt.Errorf("client: lookup %s: %s %d (generation %d): %w", in.Name, what, indices[k], in.Generation, err)
	})
}

// readSealedLWE hands every record (count of them) of the LWE generation
// under prefix of the given shape, opened by sl, to fn in order: tile by
// tile, each read whole (what a compaction reads back).
func (c *Client) readSealedLWE(ctx context.Context, prefix string, p lwepir.Params, shape lwepir.Shape, sl *seal.Sealer, count int, fn func(int, []byte) error) error {
	if err := shape.Validate(p); err != nil || shape.Records() < count {
		return fmt.Errorf("client: %s: no valid LWE shape (%d × %d)", prefix, shape.Rows, shape.Cols)
	}
	n := p.N()
	size := shape.RecordSize
	var tile []byte
	loaded := -1
	sealed := make([]byte, size)
	var rec []byte
	for r := range count {
		col, row := shape.Locate(r)
		if k := col / n; k != loaded {
			resp, err := c.dev.Get(ctx, &devicepb.GetRequest{Name: api.StoredObjectName(session.LWETilePrefix(prefix), int64(k))})
			if err != nil {
				return fmt.Errorf("tile %d: %w", k, err)
			}
			_, _, raw, err := api.ObjectRaw(resp)
			if err != nil {
				return fmt.Errorf("tile %d: %w", k, err)
			}
			tile = tile[:0]
			for _, limb := range raw {
				tile = append(tile, limb...)
			}
			if len(tile) != shape.TileBytes(p) {
				return fmt.Errorf("tile %d: %d bytes, want %d", k, len(tile), shape.TileBytes(p))
			}
			loaded = k
		}
		c0 := col % n
		for i := range size {
			sealed[i] = tile[(row+i)*n+c0]
		}
		var err error
		if rec, err = sl.Open(rec[:0], uint64(r), sealed); err != nil {
			return fmt.Errorf("record %d: %w", r, err)
		}
		if err := fn(r, rec); err != nil {
			return err
		}
	}
	return nil
}

// compactKVHeap rebuilds a heap-layout generation: every value of
// generation in (its index read back, then its heap's stream), the delta
// folded in, written as generation next.
func (c *Client) compactKVHeap(ctx context.Context, in, next *Info, ops []kv.Op) error {
	h, err := in.kvHasher()
	if err != nil {
		return err
	}
	hp := in.KV.Heap
	fold := kv.NewFold(hp.Index, h, ops)
	var entries []kv.Entry
	if in.Generation > 0 && in.Records > 0 {
		p, err := in.lweParams()
		if err != nil {
			return err
		}
		parts, err := c.heapOpen(ctx, in)
		if err != nil {
			return err
		}
		type kept struct {
			tag kv.Tag
			ptr kv.Pointer
		}
		var keep []kept
		err = c.readSealedLWE(ctx, genPrefix(in), p, parts.ishape, parts.isl, in.Records, func(_ int, rec []byte) error {
			its, err := hp.Index.DecodeBucket(rec)
			if err != nil {
				return err
			}
			for _, it := range its {
				if fold.Keep(&it) {
					ptr, err := kv.DecodePointer(it.Data[:it.Len])
					if err != nil {
						return err
					}
					if _, _, err := hp.Heap.Span(ptr); err != nil {
						return err
					}
					keep = append(keep, kept{it.Tag, ptr})
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		stream := make([]byte, 0, hp.Heap.Bytes)
		err = c.readSealedLWE(ctx, heapPrefix(in), p, parts.hshape, parts.hsl, hp.Heap.Columns, func(_ int, rec []byte) error {
			stream = append(stream, rec...)
			return nil
		})
		if err != nil {
			return fmt.Errorf("heap: %w", err)
		}
		for _, k := range keep {
			entries = append(entries, kv.Entry{Tag: k.tag, Value: stream[k.ptr.Off : k.ptr.Off+uint64(k.ptr.Len)]})
		}
	}
	added, n := fold.AddedEntries(in.KV.Entries)
	next.KV.Entries = n
	return c.writeKVHeap(ctx, next, append(entries, added...))
}
