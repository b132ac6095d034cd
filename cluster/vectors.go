package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
)

// CreateVectors creates an empty vector database of dim dimensions in
// shards shards of replicas replicas each (opt: the metric, and whether
// every shard stores its vectors encrypted).
func (c *Client) CreateVectors(ctx context.Context, name string, dim, shards, replicas int, opt client.VectorOptions) (*Map, error) {
	metric := opt.Metric
	if shards < 1 || replicas < 1 || dim < 1 {
		return nil, fmt.Errorf("cluster: create %s: %d shards × %d replicas of %d-dimensional vectors", name, shards, replicas, dim)
	}
	if strings.ContainsAny(name, "/.") || name == "" {
		return nil, fmt.Errorf("cluster: create: name %q (no '/' or '.')", name)
	}
	if metric == "" {
		metric = client.L2
	}
	m := &Map{Header: client.Header{Name: name, Kind: client.KindVectors}, Owner: c.owner, Parts: client.Parts{Vectors: &client.VectorPart{Dim: dim, Metric: metric, Encrypted: opt.EncryptVectors}}, Replicas: replicas}
	for s := 0; s < shards; s++ {
		m.Shards = append(m.Shards, Shard{ID: s})
	}
	return m, writeMap(ctx, c.etcd, m, 0)
}

// LoadVectors replaces a vector database's vectors (read from r in format
// f): vector i goes to shard i mod S. Each shard's vectors are spooled to a
// temporary file (a vector load reads its input twice), loaded into every
// replica as generation g+1, and g+1 is published by one transaction.
func (c *Client) LoadVectors(ctx context.Context, name string, r io.Reader, f dataset.VectorFormat) (*Map, error) {
	p, err := c.beginLoad(ctx, name, client.KindVectors)
	if err != nil {
		return nil, err
	}
	return c.commitLoad(ctx, p, c.writeVectors(ctx, p, r, f))
}

// writeVectors writes the vectors of load p to its shard replicas.
func (c *Client) writeVectors(ctx context.Context, p *pendingLoad, r io.Reader, f dataset.VectorFormat) error {
	m, next := p.m, p.next
	vr, err := dataset.NewVectorReader(r, f)
	if err != nil {
		return err
	}
	spool := make([]*os.File, len(next.Shards))
	writers := make([]*dataset.FVecsWriter, len(next.Shards))
	for s := range spool {
		if spool[s], err = os.CreateTemp("", "rosemary-shard-*.fvecs"); err != nil {
			return err
		}
		defer os.Remove(spool[s].Name())
		defer spool[s].Close()
		writers[s] = dataset.NewFVecsWriter(spool[s])
	}
	for i := 0; ; i++ {
		v, err := vr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(v) != m.Vectors.Dim {
			return fmt.Errorf("%w: vector %d has %d dimensions, want %d", dataset.ErrDimensionMismatch, i, len(v), m.Vectors.Dim)
		}
		s := i % len(spool)
		if err := writers[s].Write(v); err != nil {
			return err
		}
		next.Shards[s].Records++
		next.Records = i + 1
	}
	for s, sh := range next.Shards {
		if sh.Records == 0 {
			return fmt.Errorf("shard %d would be empty (%d vectors for %d shards)", s, next.Records, len(next.Shards))
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for s, sh := range next.Shards {
		for _, id := range sh.Replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cc, release, err := c.acquire(ctx, p.live[id].Addr)
				if err != nil {
					fail(fmt.Errorf("shard %d on %s: %w", s, id, err))
					return
				}
				defer release()
				db := next.ShardName(s)
				if _, err := cc.CreateVectors(ctx, db, m.Vectors.Dim, client.VectorOptions{Metric: m.Vectors.Metric, EncryptVectors: m.Vectors.Encrypted}); err != nil {
					fail(fmt.Errorf("shard %d on %s: %w", s, id, err))
					return
				}
				f, err := os.Open(spool[s].Name())
				if err == nil {
					_, err = cc.Load(ctx, db, f, client.LoadOptions{Vectors: dataset.FVecs})
					f.Close()
				}
				if err != nil {
					fail(fmt.Errorf("shard %d on %s: %w", s, id, err))
				}
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Nearest returns the k vectors nearest to query over every shard: each
// shard answers its own top k (the encrypted scan on its device), the
// client merges them (ids are global: local·S + shard).
func (c *Client) Nearest(ctx context.Context, name string, query []float32, k int) (*client.Neighbors, error) {
	start := time.Now()
	m, _, err := c.readMap(ctx, name)
	if err != nil {
		return nil, err
	}
	if m.Kind != client.KindVectors {
		return nil, fmt.Errorf("cluster: nearest %s: %w: a %s database", name, client.ErrKind, m.Kind)
	}
	if m.Generation == 0 {
		return nil, fmt.Errorf("cluster: nearest %s: %w", name, client.ErrEmpty)
	}
	live, err := c.liveDevices(ctx)
	if err != nil {
		return nil, err
	}
	type hit struct {
		id    int
		score float64
	}
	var mu sync.Mutex
	var hits []hit
	errs := make([]error, len(m.Shards))
	var wg sync.WaitGroup
	for s := range m.Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _, _, err := tryReplicas(ctx, c, m, s, live, func(ctx context.Context, cc *client.Client) (*client.Neighbors, error) {
				return cc.Nearest(ctx, m.ShardName(s), query, k)
			})
			if err != nil {
				errs[s] = err
				return
			}
			mu.Lock()
			for j, local := range res.IDs {
				hits = append(hits, hit{id: local*len(m.Shards) + s, score: res.Scores[j]})
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// L2 scores are distances (smallest first); inner products largest first.
	sort.Slice(hits, func(i, j int) bool {
		if m.Vectors.Metric == client.InnerProduct {
			return hits[i].score > hits[j].score
		}
		return hits[i].score < hits[j].score
	})
	out := &client.Neighbors{}
	for _, h := range hits[:min(k, len(hits))] {
		out.IDs = append(out.IDs, h.id)
		out.Scores = append(out.Scores, h.score)
	}
	c.metrics.query("nearest", start)
	return out, nil
}
