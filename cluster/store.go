package cluster

import (
	"context"
	"fmt"
	"io"

	"github.com/rosemary-fhe/rosemary/client"
)

// Shards and replicas a Store's Create gives a database when its spec
// names none.
const (
	DefaultShards   = 4
	DefaultReplicas = 2
)

// NewStore returns the cluster c reaches as a client.Store.
func NewStore(c *Client) client.Store { return store{c} }

type store struct{ c *Client }

func (s store) Create(ctx context.Context, name string, spec client.Spec) (client.Description, error) {
	shards, replicas := spec.Shards, spec.Replicas
	if shards == 0 {
		shards = DefaultShards
	}
	if replicas == 0 {
		replicas = DefaultReplicas
	}
	switch spec.Kind() {
	case client.KindPIR:
		return client.Described(s.c.createPIR(ctx, name, spec.PIR.RecordSize, shards, replicas, spec.PIR.PIROptions))
	case client.KindKV:
		return client.Described(s.c.CreateKV(ctx, name, shards, replicas, *spec.KV))
	case client.KindVectors:
		return client.Described(s.c.CreateVectors(ctx, name, spec.Vectors.Dim, shards, replicas, spec.Vectors.VectorOptions))
	}
	return nil, fmt.Errorf("cluster: create %s: the spec names no kind, or several", name)
}

func (s store) Info(ctx context.Context, name string) (client.Description, error) {
	return client.Described(s.c.Info(ctx, name))
}

func (s store) Drop(ctx context.Context, name string) error { return s.c.Drop(ctx, name) }
func (s store) Close() error                                { return s.c.Close() }

func (s store) PIR(name string) client.PIRDatabase        { return pirDB{s.c, name} }
func (s store) KV(name string) client.KVDatabase          { return kvDB{s.c, name} }
func (s store) Vectors(name string) client.VectorDatabase { return vectorDB{s.c, name} }

// pirDB is a cluster's PIR database.
type pirDB struct {
	c    *Client
	name string
}

func (d pirDB) Load(ctx context.Context, r io.Reader, opt client.LoadOptions) (client.Description, error) {
	return client.Described(d.c.load(ctx, d.name, r, opt.Records, opt.RecordOptions()))
}

func (d pirDB) Get(ctx context.Context, index int) (*client.Record, error) {
	a, err := d.c.Get(ctx, d.name, index)
	if err != nil {
		return nil, err
	}
	return &client.Record{Index: index, Data: a.Record, Generation: a.Generation, QueryBytes: a.QueryBytes, AnswerBytes: a.AnswerBytes,
		Measured: a.Measured, OnDevice: true, Retries: a.Retries}, nil
}

// GetMany reads the records one Get after another (each Get already asks
// every shard at once).
func (d pirDB) GetMany(ctx context.Context, indices []int) ([][]byte, error) {
	out := make([][]byte, len(indices))
	for i, index := range indices {
		a, err := d.c.Get(ctx, d.name, index)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", index, err)
		}
		out[i] = a.Record
	}
	return out, nil
}

// kvDB is a cluster's keyword database.
type kvDB struct {
	c    *Client
	name string
}

func (d kvDB) Load(ctx context.Context, r io.Reader, opt client.LoadOptions) (client.Description, error) {
	return client.Described(d.c.LoadKV(ctx, d.name, r, opt.KV, opt.Header))
}

func (d kvDB) Lookup(ctx context.Context, key []byte) ([]byte, error) {
	return d.c.Lookup(ctx, d.name, key)
}

func (d kvDB) LookupMany(ctx context.Context, keys [][]byte) ([]client.KVLookup, error) {
	return d.c.LookupMany(ctx, d.name, keys)
}

func (d kvDB) Put(ctx context.Context, key, value []byte) (*client.Update, error) {
	return d.c.Put(ctx, d.name, key, value)
}

func (d kvDB) Delete(ctx context.Context, key []byte) (*client.Update, error) {
	return d.c.Delete(ctx, d.name, key)
}

func (d kvDB) Compact(ctx context.Context) (client.Description, error) {
	return client.Described(d.c.Compact(ctx, d.name))
}

// vectorDB is a cluster's vector database.
type vectorDB struct {
	c    *Client
	name string
}

func (d vectorDB) Load(ctx context.Context, r io.Reader, opt client.LoadOptions) (client.Description, error) {
	return client.Described(d.c.LoadVectors(ctx, d.name, r, opt.Vectors))
}

func (d vectorDB) Nearest(ctx context.Context, query []float32, k int) (*client.Neighbors, error) {
	return d.c.Nearest(ctx, d.name, query, k)
}
