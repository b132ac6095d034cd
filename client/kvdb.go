package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// KVOptions configure a keyword database.
type KVOptions struct {
	// MaxValue bounds a value (0: DefaultMaxValue). Every lookup reads as
	// many buckets as a value of this size needs, whatever it finds.
	MaxValue int
	// SlotData is the value bytes of one bucket slot (0: as large as the
	// maximum value, or the largest that fits four to a record).
	SlotData int
	// LWEParams names the LWE parameter set ("" is "default");
	// InsecureParams allows one marked insecure (tests only; the manifest
	// records it).
	LWEParams      string
	InsecureParams bool
	// DeltaMax bounds the delta (0: DefaultDeltaMax); CompactAt is the
	// delta size at which an update reports that compaction is due (0:
	// half of DeltaMax).
	DeltaMax, CompactAt int
	// LWEMode: what the buckets' generations store (PIROptions.LWEMode;
	// the heap layout's are always LWEPacked).
	LWEMode LWEMode
	// Layout: KVAuto (the default: the heap layout for values longer than
	// a slot, on a device that answers packed queries), KVCuckoo or
	// KVHeapLayout (an index of pointers and a heap of whole columns,
	// queried packed: kvheap.go).
	// HeapRows (heap layout): the stored bytes of a heap column, a power
	// of two (0: chosen at each load or compaction — the LWE dimension N,
	// one pack of the packed mode, or 2N where MaxValue spans 16 such
	// columns or more and the values outweigh a pack: kvheap.go).
	Layout   KVLayoutKind
	HeapRows int
}

// DefaultMaxValue is a keyword database's default maximum value size.
const DefaultMaxValue = 64 << 10

// CreateKV creates an empty keyword database: values read by key, by
// keyword PIR (package client/kv) on the LWE scheme.
func (c *Client) CreateKV(ctx context.Context, name string, opt KVOptions) (*Info, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if opt.DeltaMax < 0 || opt.DeltaMax > MaxDeltaMax || opt.CompactAt < 0 {
		return nil, fmt.Errorf("client: create %s: delta bound %d (at most %d), compaction at %d", name, opt.DeltaMax, MaxDeltaMax, opt.CompactAt)
	}
	kind, err := ParseKVLayout(string(opt.Layout))
	if err != nil {
		return nil, err
	}
	cuckoo := opt
	cuckoo.Layout = ""
	l, pname, err := KVLayout(cuckoo)
	if err != nil {
		return nil, fmt.Errorf("client: create %s: %w", name, err)
	}
	part := &KVPart{PIRPart: PIRPart{Scheme: SchemeLWE, LWEParams: pname, RecordSize: l.BucketBytes(), Packing: c.packingVersion()}, Layout: l}
	part.StoreMode(opt.LWEMode)
	c.mu.Lock()
	packed := c.wire >= api.PackedWireVersion
	c.mu.Unlock()
	if kind == KVHeapLayout && !packed {
		return nil, fmt.Errorf("client: create %s: %w: %s", name, ErrPackedDevice, c.deviceName())
	}
	if kind == KVHeapLayout && opt.LWEMode == LWERing {
		return nil, fmt.Errorf("client: create %s: the heap layout is queried in the packed mode only, not %s", name, opt.LWEMode)
	}
	if kind == KVAuto {
		kind = KVCuckoo
		if opt.SlotData == 0 && l.MaxChunks() > 1 && packed && opt.LWEMode == LWEPacked {
			kind = KVHeapLayout
		}
	}
	if kind == KVHeapLayout {
		p, err := lwepir.ByName(pname)
		if err != nil {
			return nil, err
		}
		if part.Heap, err = kvHeapPart(opt, p, pname, l.MaxValue); err != nil {
			return nil, fmt.Errorf("client: create %s: %w", name, err)
		}
		part.RecordSize = part.Heap.Index.BucketBytes()
		part.StoreMode(LWEPacked)
	}
	return c.create(ctx, &Info{Header: Header{Name: name, Kind: KindKV}, InsecureParams: opt.InsecureParams, Sealed: true,
		Parts: Parts{KV: part}, DeltaMax: opt.DeltaMax, CompactAt: opt.CompactAt, Created: time.Now().UTC()})
}

// kvHasher is the tag hasher of keyword database in (its key outlives
// generations: a compaction keeps the tags of the items it carries over).
func (in *Info) kvHasher() (*kv.Hasher, error) { return kv.NewHasher(in.keys.tags[:]) }

// kvInput opens r's key-value pairs in opt's format (CSV by default) and
// the hasher of in's keys: what both layouts' loads read.
func kvInput(in *Info, r io.Reader, opt LoadOptions) (*kv.Reader, *kv.Hasher, error) {
	format := opt.KV
	if format == "" {
		format = kv.CSV
	}
	rd, err := kv.NewReader(r, format, opt.Header)
	if err != nil {
		return nil, nil, err
	}
	h, err := in.kvHasher()
	if err != nil {
		return nil, nil, err
	}
	return rd, h, nil
}

// loadKV reads every pair of r (checked: a duplicate key, a value over the
// maximum, a malformed line fail the load, naming the line, before
// anything is written) and writes generation in.
func (c *Client) loadKV(ctx context.Context, in *Info, r io.Reader, opt LoadOptions) error {
	if in.KV.Heap != nil {
		return c.loadKVHeap(ctx, in, r, opt)
	}
	rd, h, err := kvInput(in, r, opt)
	if err != nil {
		return err
	}
	items, pairs, err := in.KV.Layout.Collect(rd, h)
	if err != nil {
		return err
	}
	in.KV.Entries = pairs
	return c.writeKV(ctx, in, items)
}

// writeKV builds the cuckoo table of items and writes it as generation in
// (one sealed record per bucket).
func (c *Client) writeKV(ctx context.Context, in *Info, items []kv.Item) error {
	p, err := in.lweParams()
	if err != nil {
		return err
	}
	t, err := kv.Build(in.KV.Layout, items)
	if err != nil {
		return err
	}
	l := t.Layout
	in.KV.Layout = l
	in.KV.HashSeed = Hex(bytes.Clone(t.Seed[:]))
	return c.writeLWE(ctx, in, p, &bucketReader{t: t}, l.Buckets)
}

// bucketReader hands a table's buckets to writeLWE in order.
type bucketReader struct {
	t   *kv.Table
	b   int
	buf []byte
}

func (r *bucketReader) Next() ([]byte, error) {
	if r.b == r.t.Layout.Buckets {
		return nil, io.EOF
	}
	r.buf = r.t.Bucket(r.buf[:0], r.b)
	r.b++
	return r.buf, nil
}

// hashSeed is the bucket seed of a keyword generation.
func (in *Info) hashSeed() ([32]byte, error) {
	var s [32]byte
	if len(in.KV.HashSeed) != len(s) {
		return s, fmt.Errorf("client: %s: manifest holds no valid hash seed", in.Name)
	}
	copy(s[:], in.KV.HashSeed)
	return s, nil
}

// KVLookup is one lookup's answer and what it cost.
type KVLookup struct {
	Key   []byte `json:"key"`
	Found bool   `json:"found"`
	Value []byte `json:"value"`
	// Queries: the PIR queries asked (the same for every key); QueryBytes
	// and AnswerBytes their payloads up and down; ManifestBytes the
	// manifest read first, DeltaBytes the delta segments read whole.
	Queries       int     `json:"queries"`
	QueryBytes    int64   `json:"query_bytes"`
	AnswerBytes   int64   `json:"answer_bytes"`
	ManifestBytes int64   `json:"manifest_bytes"`
	DeltaBytes    int64   `json:"delta_bytes"`
	Seconds       float64 `json:"seconds"`
}

// Lookup returns the value of key in keyword database name, or
// ErrNotFound. The device answers the same number of private queries of
// the same size whether or not the key is there, and learns neither.
func (c *Client) Lookup(ctx context.Context, name string, key []byte) ([]byte, error) {
	r, err := c.LookupMany(ctx, name, [][]byte{key})
	if err != nil {
		return nil, err
	}
	if !r[0].Found {
		return nil, fmt.Errorf("%w: %q in %s", ErrNotFound, truncKey(key), name)
	}
	return r[0].Value, nil
}

func truncKey(k []byte) string {
	if len(k) > 64 {
		return string(k[:64]) + "…"
	}
	return string(k)
}

// LookupMany looks keys up with one batch of queries (every key's
// buckets at once, so the device answers them in shared passes over the
// database). A key not there has Found false.
func (c *Client) LookupMany(ctx context.Context, name string, keys [][]byte) ([]KVLookup, error) {
	return retryGeneration(ctx, c, name, func(in *Info) ([]KVLookup, error) { return c.lookupIn(ctx, in, keys) })
}

// retryGeneration runs query on the current manifest; if it fails because
// a compaction or load replaced the generation it read (and removed its
// data), or updates replaced the delta segments it read, meanwhile, it
// runs again on the new manifest: a query sees one generation with one
// delta, never a mix, and does not fail for the swap.
func retryGeneration[T any](ctx context.Context, c *Client, name string, query func(*Info) (T, error)) (T, error) {
	in, err := c.readInfo(ctx, name)
	if err != nil {
		var none T
		return none, err
	}
	for try := 0; ; try++ {
		out, err := query(in)
		if err == nil || try == 2 || !isNotFound(err) {
			return out, err
		}
		now, err2 := c.readInfo(ctx, name)
		if err2 != nil || (now.Generation == in.Generation && now.Token == in.Token && sameDelta(now.Delta, in.Delta)) {
			return out, err
		}
		in = now
	}
}

func (c *Client) lookupIn(ctx context.Context, in *Info, keys [][]byte) ([]KVLookup, error) {
	start := time.Now()
	if err := kvOnly(in, "Lookup"); err != nil {
		return nil, err
	}
	if in.KV.Heap != nil {
		return c.lookupHeap(ctx, in, keys)
	}
	l := in.KV.Layout
	ops, err := c.deltaOps(ctx, in)
	if err != nil {
		return nil, err
	}
	h, err := in.kvHasher()
	if err != nil {
		return nil, err
	}
	m := l.MaxChunks()
	tags := make([][]kv.Tag, len(keys))
	var buckets []int
	for i, k := range keys {
		if len(k) > kv.MaxKey {
			return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrKeyTooLarge, len(k), kv.MaxKey)
		}
		tags[i] = l.Tags(h, k)
	}
	var recs [][]byte
	var cost queryCost
	if in.Generation > 0 {
		seed, err := in.hashSeed()
		if err != nil {
			return nil, err
		}
		if err := l.Validate(in.pir().RecordSize); err != nil || l.Buckets < 1 || l.Buckets > in.Records {
			return nil, fmt.Errorf("client: %s: manifest holds no valid kv layout", in.Name)
		}
		for _, t := range tags {
			buckets = append(buckets, l.Candidates(seed, t)...)
		}
		if recs, cost, err = c.fetchRecords(ctx, in, buckets); err != nil {
			return nil, err
		}
	}
	manifest := manifestSize(in)
	out := make([]KVLookup, len(keys))
	for i, k := range keys {
		r := KVLookup{Key: k, Queries: kv.Choices * m, ManifestBytes: manifest, DeltaBytes: in.Delta.storedBytes()}
		if op := kv.LastKey(ops, k); op != nil {
			r.Found, r.Value = op.Kind == kv.OpPut, op.Value
		} else if recs != nil {
			n := m * kv.Choices
			if r.Value, r.Found, err = l.Find(recs[i*n:(i+1)*n], tags[i]); err != nil {
				return nil, fmt.Errorf("client: lookup %s: %w", in.Name, err)
			}
		}
		if !r.Found {
			r.Value = nil
		}
		out[i] = r
	}
	if len(keys) > 0 {
		// Each key's share of the batch.
		n := int64(len(keys))
		for i := range out {
			out[i].QueryBytes, out[i].AnswerBytes = cost.query/n, cost.answer/n
			out[i].Seconds = time.Since(start).Seconds()
		}
	}
	return out, nil
}

// manifestSize is the encoded size of manifest in, as a query reads it.
func manifestSize(in *Info) int64 {
	b, err := json.Marshal(in)
	if err != nil {
		return 0
	}
	return int64(len(b))
}
