package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// Compact folds database name's delta into a new generation, fenced as a
// Load is: the generation is written beside the current one (which keeps
// answering queries, with its delta), then published by one
// compare-and-swap of the manifest. Updates made while it ran stay in the
// new generation's delta (resealed for it); a load or another compaction
// that published meanwhile makes it fail with ErrConcurrentLoad.
//
// The owner reads the current generation back (every record, opened
// here), applies the delta and writes the result: the device learns that
// a compaction ran, as it learns that a load did, nothing more.
func (c *Client) Compact(ctx context.Context, name string) (*Info, error) {
	return c.compact(ctx, name, "", false)
}

// compact is Compact of a database of kind want ("": any); rekey writes a
// new generation (under a fresh key) even with no delta to fold, as
// Revoke does.
func (c *Client) compact(ctx context.Context, name string, want Kind, rekey bool) (*Info, error) {
	in, headGen, err := c.readHead(ctx, name)
	if err != nil {
		return nil, err
	}
	if want != "" && in.Kind != want {
		return nil, fmt.Errorf("%w: %q is a %s database, not %s", ErrKind, name, in.Kind, want)
	}
	ops, err := c.deltaOps(ctx, in)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 && !rekey {
		return in, nil
	}
	if in.scheme() != SchemeLWE || (in.Kind != KindKV && in.Kind != KindPIR) {
		return nil, fmt.Errorf("%w: compaction of a %s database on %s (reload it)", ErrKind, in.Kind, in.scheme())
	}
	next, err := c.nextGeneration(in)
	if err != nil {
		return nil, err
	}
	if in.Kind == KindKV {
		err = c.compactKV(ctx, in, &next, ops)
	} else {
		err = c.compactPIR(ctx, in, &next, ops)
	}
	if err == nil {
		err = c.writeGrants(ctx, &next)
	}
	if err == nil {
		err = c.publishCompacted(ctx, in, &next, headGen, len(ops))
	}
	if err != nil {
		c.deletePrefix(context.WithoutCancel(ctx), genPrefix(&next)+"/")
		c.deletePrefix(context.WithoutCancel(ctx), deltaPrefix(&next))
		return nil, fmt.Errorf("client: compact %s: %w", name, err)
	}
	if err := c.removeSuperseded(ctx, &next); err != nil {
		return &next, fmt.Errorf("client: compact %s: published generation %d, but removing earlier data: %w", name, next.Generation, err)
	}
	return &next, nil
}

// publishCompacted publishes next, built from in and its first done
// delta operations: if updates replaced the manifest meanwhile, their
// operations become next's delta (one segment of its own) and the swap is
// tried again.
func (c *Client) publishCompacted(ctx context.Context, in, next *Info, headGen object.Generation, done int) error {
	built := next.Records // the new generation's; appends since stay in its delta
	fenced := false
	defer func() {
		if fenced {
			c.lowerFence(context.WithoutCancel(ctx), in.Name)
		}
	}()
	for range maxUpdateTries {
		err := c.writeInfo(ctx, next, headGen)
		if !errors.Is(err, api.ErrStale) {
			return err
		}
		if !fenced {
			// Lost to an update: hold the next ones back (fence.go).
			if err := c.raiseFence(ctx, in.Name); err != nil {
				return err
			}
			fenced = true
		}
		cur, curGen, err := c.readHead(ctx, in.Name)
		if err != nil {
			return err
		}
		if cur.Generation != in.Generation || cur.Token != in.Token {
			return fmt.Errorf("%w (generation %d published meanwhile)", ErrConcurrentLoad, cur.Generation)
		}
		ops, err := c.deltaOps(ctx, cur)
		if err != nil {
			return err
		}
		if len(ops) < done {
			return fmt.Errorf("%w (the delta was replaced meanwhile)", ErrConcurrentLoad)
		}
		if next.Delta != nil {
			// This attempt's segment: no manifest lists it.
			c.deleteObjects(context.WithoutCancel(ctx), next.Delta.Segments[0].Object)
		}
		if err := c.setDelta(ctx, next, ops[done:]); err != nil {
			return err
		}
		// Records appended meanwhile (a keyword database's Records are
		// its buckets: none there).
		appended := cur.Records - in.Records
		next.Records = built + appended
		if appended > 0 {
			if next.Delta == nil {
				return fmt.Errorf("%d records appended meanwhile are in no delta", appended)
			}
			next.Delta.Appended = appended
		}
		headGen = curGen
	}
	return fmt.Errorf("the manifest kept changing (%d tries)", maxUpdateTries)
}

// compactKV rebuilds a keyword table: the items of generation in, the
// delta applied. It streams the old buckets and keeps their items in one
// list (values copied into large blocks), dropping every chunk of a key
// the delta changed; no map of all the items is built, so a table of 10 M
// keys holds its values once.
func (c *Client) compactKV(ctx context.Context, in, next *Info, ops []kv.Op) error {
	if in.KV.Heap != nil {
		return c.compactKVHeap(ctx, in, next, ops)
	}
	l := in.KV.Layout
	h, err := in.kvHasher()
	if err != nil {
		return err
	}
	fold := kv.NewFold(l, h, ops)
	var items []kv.Item
	var blocks valueBlocks
	if in.Generation > 0 && in.Records > 0 {
		items = make([]kv.Item, 0, in.Records*l.Slots)
		err := c.readLWERecords(ctx, in, func(_ int, rec []byte) error {
			its, err := l.DecodeBucket(rec)
			if err != nil {
				return err
			}
			for _, it := range its {
				if fold.Keep(&it) {
					it.Data = blocks.copy(it.Data)
					items = append(items, it)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	added, entries := fold.Added(in.KV.Entries)
	items = append(items, added...)
	next.KV.Entries = entries
	return c.writeKV(ctx, next, items)
}

// valueBlocks copies values into large blocks: one allocation per 64 MiB,
// not one per value.
type valueBlocks struct{ cur []byte }

func (b *valueBlocks) copy(v []byte) []byte {
	if cap(b.cur)-len(b.cur) < len(v) {
		b.cur = make([]byte, 0, max(64<<20, len(v)))
	}
	n := len(b.cur)
	b.cur = append(b.cur, v...)
	return b.cur[n:len(b.cur):len(b.cur)]
}

// compactPIR rewrites an LWE PIR database's records with the delta's sets
// applied.
func (c *Client) compactPIR(ctx context.Context, in, next *Info, ops []kv.Op) error {
	recs := make([][]byte, in.Records)
	if err := c.readLWERecords(ctx, in, func(i int, rec []byte) error {
		recs[i] = append([]byte(nil), rec...)
		return nil
	}); err != nil {
		return err
	}
	for _, o := range ops {
		if o.Kind == kv.OpSet && o.Index >= 0 && o.Index < int64(len(recs)) {
			recs[o.Index] = padRecord(o.Value, in.pir().RecordSize)
		}
	}
	for i := in.genRecords(); i < len(recs); i++ {
		if recs[i] == nil {
			return fmt.Errorf("appended record %d is not in the delta", i)
		}
	}
	p, err := in.lweParams()
	if err != nil {
		return err
	}
	return c.writeLWE(ctx, next, p, &sliceReader{recs: recs}, len(recs))
}

type sliceReader struct {
	recs [][]byte
	i    int
}

func (r *sliceReader) Next() ([]byte, error) {
	if r.i == len(r.recs) {
		return nil, io.EOF
	}
	r.i++
	return r.recs[r.i-1], nil
}

// readLWERecords hands every record of LWE generation in, opened, to fn
// in order: tile by tile, each read whole from the device.
func (c *Client) readLWERecords(ctx context.Context, in *Info, fn func(int, []byte) error) error {
	p, err := in.lweParams()
	if err != nil {
		return err
	}
	shape := lwepir.Shape{Rows: in.pir().Rows, Cols: in.pir().Cols, RecordSize: in.StoredRecordSize()}
	if err := shape.Validate(p); err != nil || shape.Records() < in.genRecords() {
		return fmt.Errorf("client: %s: manifest holds no valid LWE shape (%d × %d)", in.Name, in.pir().Rows, in.pir().Cols)
	}
	sl, err := c.sealer(ctx, in)
	if err != nil {
		return err
	}
	return c.readSealedLWE(ctx, genPrefix(in), p, shape, sl, in.genRecords(), fn)
}

// Records hands every record of LWE PIR database name's current
// generation, opened, to fn in order (its delta not applied): what a
// cluster's compaction reads back of the shards it rebuilds.
func (c *Client) Records(ctx context.Context, name string, fn func(int, []byte) error) error {
	in, err := c.readInfo(ctx, name)
	if err != nil {
		return err
	}
	if in.Kind != KindPIR || in.scheme() != SchemeLWE {
		return fmt.Errorf("%w: %q is a %s database on %s, Records reads LWE PIR databases", ErrKind, name, in.Kind, in.scheme())
	}
	if in.Generation == 0 || in.Records == 0 {
		return nil
	}
	return c.readLWERecords(ctx, in, fn)
}
