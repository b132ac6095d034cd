package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
)

// A keyword database on a cluster is the cuckoo table of package client/kv
// sharded as a PIR database's records are: bucket b is record b, in shard
// b mod S at local index b / S, each shard a sealed LWE PIR database on
// every one of its replicas. A lookup asks every shard for every
// candidate bucket of every chunk (2·MaxChunks queries per shard per key):
// the shard holding a bucket for it, every other shard for a bucket of
// its own, so no device learns the key, which shard held it, or whether
// it exists. The delta is in etcd (kvdelta.go), read whole by every
// lookup. Loads and compactions are fenced generations like any load
// (claim.go); repair, reconcile and sweep handle the shards as any PIR
// shard (nothing else of a keyword database is on a device).

// CreateKV creates an empty keyword database in shards shards of replicas
// replicas each (opt as client.CreateKV's; its delta bound at most
// MaxKVDelta, 0: MaxKVDelta).
func (c *Client) CreateKV(ctx context.Context, name string, shards, replicas int, opt client.KVOptions) (*Map, error) {
	if shards < 1 || replicas < 1 {
		return nil, fmt.Errorf("cluster: create %s: %d shards × %d replicas", name, shards, replicas)
	}
	if strings.ContainsAny(name, "/.") || name == "" {
		return nil, fmt.Errorf("cluster: create: name %q (no '/' or '.')", name)
	}
	if opt.DeltaMax < 0 || opt.DeltaMax > MaxKVDelta || opt.CompactAt < 0 {
		return nil, fmt.Errorf("cluster: create %s: delta bound %d (at most %d: one etcd request), compaction at %d", name, opt.DeltaMax, MaxKVDelta, opt.CompactAt)
	}
	l, pname, err := client.KVLayout(opt)
	if err != nil {
		return nil, fmt.Errorf("cluster: create %s: %w", name, err)
	}
	m := &Map{Header: client.Header{Name: name, Kind: client.KindKV}, Owner: c.owner, InsecureParams: opt.InsecureParams,
		Parts: client.Parts{KV: &client.KVPart{PIRPart: client.PIRPart{RecordSize: l.BucketBytes(), Scheme: client.SchemeLWE, LWEParams: pname}, Layout: l}}, DeltaMax: opt.DeltaMax, CompactAt: opt.CompactAt, Replicas: replicas}
	m.KV.StoreMode(opt.LWEMode)
	for s := range shards {
		m.Shards = append(m.Shards, Shard{ID: s})
	}
	return m, writeMap(ctx, c.etcd, m, 0)
}

// kvHasher is the tag hasher of keyword database m.
func (c *Client) kvHasher(m *Map) (*kv.Hasher, error) { return c.keys.KVHasher(kvLabel(m)) }

// LoadKV replaces keyword database name's entries with the pairs read
// from r (format, header: as client.LoadOptions). The input is read and
// checked whole first — a duplicate key, a value over the maximum, a
// malformed line fail the load naming the line, before anything is
// claimed or written — then the table is built and loaded as generation
// g+1 of the shards; the delta is dropped with generation g.
func (c *Client) LoadKV(ctx context.Context, name string, r io.Reader, format kv.Format, header bool) (*Map, error) {
	m, _, err := c.readMap(ctx, name)
	if err != nil {
		return nil, err
	}
	if m.Kind != client.KindKV || m.KV == nil {
		return nil, fmt.Errorf("%w: %s is a %s database, not a kv one", client.ErrKind, name, m.Kind)
	}
	if format == "" {
		format = kv.CSV
	}
	rd, err := kv.NewReader(r, format, header)
	if err != nil {
		return nil, err
	}
	h, err := c.kvHasher(m)
	if err != nil {
		return nil, err
	}
	items, pairs, err := m.KV.Layout.Collect(rd, h)
	if err != nil {
		return nil, fmt.Errorf("cluster: load %s: %w (nothing published)", name, err)
	}
	p, err := c.beginLoad(ctx, name, client.KindKV)
	if err != nil {
		return nil, err
	}
	p.next.KV.Entries = pairs
	return c.commitLoad(ctx, p, c.writeTable(ctx, p, items))
}

// writeTable builds the cuckoo table of items (a bucket for every shard at
// least) and writes it to load p's shard replicas.
func (c *Client) writeTable(ctx context.Context, p *pendingLoad, items []kv.Item) error {
	t, err := kv.BuildAtLeast(p.m.KV.Layout, items, len(p.next.Shards))
	if err != nil {
		return err
	}
	l := t.Layout
	p.next.KV.Layout, p.next.KV.HashSeed = l, client.Hex(bytes.Clone(t.Seed[:]))
	return c.writeRecords(ctx, p, &tableReader{t: t}, dataset.FixedSize, dataset.RecordOptions{})
}

// tableReader reads a table's buckets, in order, as fixed-size records.
type tableReader struct {
	t        *kv.Table
	b        int
	buf, out []byte
}

func (r *tableReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.b == r.t.Layout.Buckets {
			return 0, io.EOF
		}
		r.buf = r.t.Bucket(r.buf[:0], r.b)
		r.out = r.buf
		r.b++
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// Lookup returns the value of key in keyword database name, or an error
// wrapping client.ErrNotFound (only this client learns which).
func (c *Client) Lookup(ctx context.Context, name string, key []byte) ([]byte, error) {
	r, err := c.LookupMany(ctx, name, [][]byte{key})
	if err != nil {
		return nil, err
	}
	if !r[0].Found {
		k := string(key)
		if len(k) > 64 {
			k = k[:64] + "…"
		}
		return nil, fmt.Errorf("%w: %q in %s", client.ErrNotFound, k, name)
	}
	return r[0].Value, nil
}

// LookupMany looks keys up at once: every shard answers one batch of
// queries (2·MaxChunks per key, whatever the keys). Queries in the answers
// counts those of one shard. A lookup that loses its generation to two
// compactions or loads meanwhile (its shards swept) runs again on the new
// one: it sees one generation with its delta, never a mix.
func (c *Client) LookupMany(ctx context.Context, name string, keys [][]byte) ([]client.KVLookup, error) {
	start := time.Now()
	for try := 0; ; try++ {
		s, err := c.readKV(ctx, name)
		if err != nil {
			return nil, err
		}
		out, err := c.lookupIn(ctx, s, keys)
		if err == nil {
			c.metrics.query("lookup", start)
			for i := range out {
				out[i].Seconds = time.Since(start).Seconds()
			}
			return out, nil
		}
		if try == 2 || ctx.Err() != nil {
			return nil, err
		}
		if now, _, err2 := c.readMap(ctx, name); err2 != nil || now.Token == s.m.Token {
			return nil, err
		}
	}
}

// lookupIn looks keys up in snapshot s.
func (c *Client) lookupIn(ctx context.Context, s *kvSnapshot, keys [][]byte) ([]client.KVLookup, error) {
	m := s.m
	l := m.KV.Layout
	h, err := c.kvHasher(m)
	if err != nil {
		return nil, err
	}
	n := l.Queries()
	tags := make([][]kv.Tag, len(keys))
	for i, k := range keys {
		if len(k) > kv.MaxKey {
			return nil, fmt.Errorf("%w: %d bytes (at most %d)", client.ErrKeyTooLarge, len(k), kv.MaxKey)
		}
		tags[i] = l.Tags(h, k)
	}
	var recs [][]byte
	if m.Generation > 0 {
		if recs, err = c.fetchBuckets(ctx, m, tags); err != nil {
			return nil, err
		}
	}
	ops := s.all()
	out := make([]client.KVLookup, len(keys))
	for i, k := range keys {
		r := client.KVLookup{Key: k, Queries: n}
		if op := kv.LastKey(ops, k); op != nil {
			r.Found, r.Value = op.Kind == kv.OpPut, op.Value
		} else if recs != nil {
			if r.Value, r.Found, err = l.Find(recs[i*n:(i+1)*n], tags[i]); err != nil {
				return nil, fmt.Errorf("cluster: lookup %s: %w", m.Name, err)
			}
		}
		if !r.Found {
			r.Value = nil
		}
		out[i] = r
	}
	return out, nil
}

// fetchBuckets reads the candidate buckets of tags from m's shards: every
// shard is asked the same number of queries, each at the local index of
// a candidate it holds or, for one it does not, at an index of its own.
func (c *Client) fetchBuckets(ctx context.Context, m *Map, tags [][]kv.Tag) ([][]byte, error) {
	l := m.KV.Layout
	seed := m.KV.HashSeed
	S := len(m.Shards)
	if len(seed) != 32 || l.Validate(m.pir().RecordSize) != nil || l.Buckets < S || l.Buckets != m.Records {
		return nil, fmt.Errorf("cluster: %s: the map holds no valid kv layout", m.Name)
	}
	var buckets []int
	for _, t := range tags {
		buckets = append(buckets, l.Candidates([32]byte(seed), t)...)
	}
	idx := make([][]int, S)
	for s := range idx {
		if m.Shards[s].Records < 1 {
			return nil, fmt.Errorf("cluster: %s: shard %d holds no buckets", m.Name, s)
		}
		idx[s] = make([]int, len(buckets))
		for k, b := range buckets {
			idx[s][k] = min(b/S, m.Shards[s].Records-1)
		}
	}
	live, err := c.liveDevices(ctx)
	if err != nil {
		return nil, err
	}
	answers := make([][][]byte, S)
	errs := make([]error, S)
	var wg sync.WaitGroup
	for s := range S {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[s], _, _, errs[s] = tryReplicas(ctx, c, m, s, live, func(ctx context.Context, cc *client.Client) ([][]byte, error) {
				return cc.GetMany(ctx, m.ShardName(s), idx[s])
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([][]byte, len(buckets))
	for k, b := range buckets {
		if len(answers[b%S]) != len(buckets) {
			return nil, fmt.Errorf("cluster: %s: shard %d answered %d of %d queries", m.Name, b%S, len(answers[b%S]), len(buckets))
		}
		out[k] = answers[b%S][k]
	}
	return out, nil
}

// Compact folds keyword database name's delta into a new generation,
// fenced as a load is, while lookups go on against the current one with
// its delta: every shard's buckets are read back from a replica and
// opened here, the delta applied, the table rebuilt and loaded. It is
// published with the delta in one transaction: updates made meanwhile
// become the new generation's delta; a load or compaction that published
// first makes it fail with ErrConcurrentLoad.
func (c *Client) Compact(ctx context.Context, name string) (*Map, error) {
	p, err := c.beginLoad(ctx, name, client.KindKV)
	if err != nil {
		return nil, err
	}
	s, err := c.readKV(ctx, name)
	if err == nil && (s.m.Generation != p.m.Generation || s.m.Token != p.m.Token) {
		err = fmt.Errorf("%w (%w): %s", ErrConcurrentLoad, ErrConflict, name)
	}
	if err != nil {
		c.endClaim(p.claim)
		return nil, err
	}
	ops := s.all()
	if len(ops) == 0 {
		c.endClaim(p.claim)
		return p.m, nil
	}
	p.publish = func(ctx context.Context) error { return c.publishCompacted(ctx, p, s, len(ops)) }
	return c.commitLoad(ctx, p, c.compactTable(ctx, p, ops))
}

// compactTable reads the current generation's items back, shard by shard,
// folds ops into them and writes the table of load p.
func (c *Client) compactTable(ctx context.Context, p *pendingLoad, ops []kv.Op) error {
	m := p.m
	l := m.KV.Layout
	h, err := c.kvHasher(m)
	if err != nil {
		return err
	}
	fold := kv.NewFold(l, h, ops)
	var items []kv.Item
	for s := range m.Shards {
		if m.Generation == 0 {
			break
		}
		// Items are kept only once the replica has answered whole.
		its, _, _, err := tryReplicas(ctx, c, m, s, p.live, func(ctx context.Context, cc *client.Client) ([]kv.Item, error) {
			var out []kv.Item
			err := cc.Records(ctx, m.ShardName(s), func(_ int, rec []byte) error {
				b, err := l.DecodeBucket(rec)
				for _, it := range b {
					it.Data = append([]byte(nil), it.Data...)
					out = append(out, it)
				}
				return err
			})
			return out, err
		})
		if err != nil {
			return fmt.Errorf("read shard %d: %w", s, err)
		}
		for _, it := range its {
			if fold.Keep(&it) {
				items = append(items, it)
			}
		}
	}
	added, entries := fold.Added(m.KV.Entries)
	p.next.KV.Entries = entries
	return c.writeTable(ctx, p, append(items, added...))
}

// publishCompacted publishes compaction p, built from snapshot s and its
// first done delta operations: the map, and a delta of the operations
// that came after (one segment), in one transaction, if the map, the head
// and p's claim are as they were. A map a repair re-placed, or a delta
// that grew meanwhile, is published over again; another generation is a
// concurrent load that won.
func (c *Client) publishCompacted(ctx context.Context, p *pendingLoad, s *kvSnapshot, done int) error {
	next := p.next
	mapKey, hk := MapKey(next.Owner, next.Name), headKey(next.Owner, next.Name)
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	rev := p.rev
	for range maxKVUpdateTries {
		rest := s.all()[done:]
		head := kvHead{Token: next.Token, Ops: len(rest), Bytes: len(kv.EncodeOps(nil, rest))}
		var writes []clientv3.Op
		sg, put, err := c.newSegment(next, rest)
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			head.Segments = []kvSegment{sg}
		}
		writes = append(writeDelta(next, head, put, s.segs), clientv3.OpPut(mapKey, string(b)))
		if len(rest) == 0 {
			writes = writes[1:] // no segment
		}
		resp, err := c.etcd.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(mapKey), "=", rev),
			clientv3.Compare(clientv3.CreateRevision(p.claim.key), "=", p.claim.token),
			clientv3.Compare(clientv3.ModRevision(hk), "=", s.headRev),
		).Then(writes...).Commit()
		if err != nil {
			return fmt.Errorf("%w: publish %s: %w", ErrEtcd, next.Name, Denied(err))
		}
		if resp.Succeeded {
			return nil
		}
		now, err := c.readKV(ctx, next.Name)
		if err != nil {
			return err
		}
		switch {
		case now.mapRev == rev && now.headRev == s.headRev:
			return fmt.Errorf("%w: %s (token %d)", ErrClaimLost, next.Name, p.claim.token)
		case now.m.Generation+1 != next.Generation || now.m.Token != next.PreviousToken || now.head.Ops < done:
			return fmt.Errorf("%w (%w): %s", ErrConcurrentLoad, ErrConflict, next.Name)
		}
		rev, s = now.mapRev, now
	}
	return fmt.Errorf("%w: %s: the map or its delta kept changing while it published", ErrConflict, next.Name)
}
