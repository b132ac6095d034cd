package client

import (
	"context"
	"fmt"
	"io"
)

// NewStore returns the Store of the one device c reaches.
func NewStore(c *Client) Store { return deviceStore{c} }

// deviceStore is one device's Store: a Client's methods, typed.
type deviceStore struct{ c *Client }

func (s deviceStore) Create(ctx context.Context, name string, spec Spec) (Description, error) {
	if spec.Shards > 1 || spec.Replicas > 1 {
		return nil, fmt.Errorf("client: create %s: %d shards × %d replicas: one device holds one copy (create it on a cluster)", name, spec.Shards, spec.Replicas)
	}
	switch spec.Kind() {
	case KindPIR:
		return Described(s.c.CreatePIR(ctx, name, spec.PIR.RecordSize, spec.PIR.PIROptions))
	case KindKV:
		return Described(s.c.CreateKV(ctx, name, *spec.KV))
	case KindVectors:
		return Described(s.c.CreateVectors(ctx, name, spec.Vectors.Dim, spec.Vectors.VectorOptions))
	}
	return nil, fmt.Errorf("client: create %s: the spec names no kind, or several", name)
}

func (s deviceStore) Info(ctx context.Context, name string) (Description, error) {
	return Described(s.c.Info(ctx, name))
}

func (s deviceStore) Drop(ctx context.Context, name string) error { return s.c.Drop(ctx, name) }
func (s deviceStore) Close() error                                { return s.c.Close() }

func (s deviceStore) PIR(name string) PIRDatabase        { return devicePIR{s.c, name} }
func (s deviceStore) KV(name string) KVDatabase          { return deviceKV{s.c, name} }
func (s deviceStore) Vectors(name string) VectorDatabase { return deviceVectors{s.c, name} }

// devicePIR is a PIR database of one device; it is a PIRUpdater too.
type devicePIR struct {
	c    *Client
	name string
}

func (d devicePIR) Load(ctx context.Context, r io.Reader, opt LoadOptions) (Description, error) {
	return Described(d.c.load(ctx, d.name, KindPIR, r, opt))
}

func (d devicePIR) Get(ctx context.Context, index int) (*Record, error) {
	q, err := d.c.GetQuery(ctx, d.name, index)
	if err != nil {
		return nil, err
	}
	return &Record{Index: index, Data: q.Record, QueryBytes: q.QueryBytes, AnswerBytes: q.AnswerBytes, Measured: q.Measured,
		OnDevice: q.Device != nil, Seconds: q.Seconds}, nil
}

func (d devicePIR) GetMany(ctx context.Context, indices []int) ([][]byte, error) {
	return d.c.GetMany(ctx, d.name, indices)
}

func (d devicePIR) Set(ctx context.Context, index int, record []byte) (*Update, error) {
	return d.c.Set(ctx, d.name, index, record)
}

func (d devicePIR) Append(ctx context.Context, records ...[]byte) (*Appended, error) {
	return d.c.Append(ctx, d.name, records...)
}

func (d devicePIR) AppendFrom(ctx context.Context, r io.Reader, opt LoadOptions) (*Appended, error) {
	return d.c.AppendFrom(ctx, d.name, r, opt)
}

func (d devicePIR) Compact(ctx context.Context) (Description, error) {
	return Described(d.c.compact(ctx, d.name, KindPIR, false))
}

// deviceKV is a keyword database of one device.
type deviceKV struct {
	c    *Client
	name string
}

func (d deviceKV) Load(ctx context.Context, r io.Reader, opt LoadOptions) (Description, error) {
	return Described(d.c.load(ctx, d.name, KindKV, r, opt))
}

func (d deviceKV) Lookup(ctx context.Context, key []byte) ([]byte, error) {
	return d.c.Lookup(ctx, d.name, key)
}

func (d deviceKV) LookupMany(ctx context.Context, keys [][]byte) ([]KVLookup, error) {
	return d.c.LookupMany(ctx, d.name, keys)
}

func (d deviceKV) Put(ctx context.Context, key, value []byte) (*Update, error) {
	return d.c.Put(ctx, d.name, key, value)
}

func (d deviceKV) Delete(ctx context.Context, key []byte) (*Update, error) {
	return d.c.Delete(ctx, d.name, key)
}

func (d deviceKV) Compact(ctx context.Context) (Description, error) {
	return Described(d.c.compact(ctx, d.name, KindKV, false))
}

// deviceVectors is a vector database of one device.
type deviceVectors struct {
	c    *Client
	name string
}

func (d deviceVectors) Load(ctx context.Context, r io.Reader, opt LoadOptions) (Description, error) {
	return Described(d.c.load(ctx, d.name, KindVectors, r, opt))
}

func (d deviceVectors) Nearest(ctx context.Context, query []float32, k int) (*Neighbors, error) {
	return d.c.Nearest(ctx, d.name, query, k)
}

func (s deviceStore) Grant(ctx context.Context, name, identity string, role Role, memberKey []byte) error {
	return s.c.Grant(ctx, name, identity, role, memberKey)
}

func (s deviceStore) Revoke(ctx context.Context, name, identity string) error {
	return s.c.Revoke(ctx, name, identity)
}
