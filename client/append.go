package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
)

// Append adds records at the end of PIR database name, without a reload
// (shorter records are zero-padded): they take the next indices, returned
// with the update, and are in the delta until a compaction folds them in.
// A Get of an appended record asks the device the same query as any other
// (of a random record of the generation: see getIn), so the device cannot
// tell it from a Get of a loaded record. The database must be loaded.
func (c *Client) Append(ctx context.Context, name string, records ...[]byte) (*Appended, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("client: append %s: no records", name)
	}
	first := 0
	u, err := c.update(ctx, name, func(in *Info) ([]kv.Op, int, error) {
		if err := pirOnly(in, "Append"); err != nil {
			return nil, 0, err
		}
		if in.genRecords() == 0 {
			return nil, 0, fmt.Errorf("client: append %s: %w (appends extend a loaded database)", name, ErrEmpty)
		}
		first = in.Records
		ops := make([]kv.Op, len(records))
		for i, r := range records {
			if len(r) > in.pir().RecordSize {
				return nil, 0, fmt.Errorf("client: append %s: record %d: %w: %d bytes, the database's are %d", name, i, ErrRecordTooLarge, len(r), in.pir().RecordSize)
			}
			ops[i] = kv.Op{Kind: kv.OpSet, Index: int64(first + i), Value: r}
		}
		return ops, len(ops), nil
	})
	if err != nil {
		return nil, err
	}
	return &Appended{Update: *u, First: first, Records: first + len(records)}, nil
}

// Appended is what an Append left: the delta's size, the index of the
// first record appended and the records the database now holds.
type Appended struct {
	Update
	First   int `json:"first"`
	Records int `json:"records"`
}

// AppendFrom appends the records of r, read as Load reads a PIR
// database's input (opt.Records, Column, Header), in one update. The
// records read are bounded by the delta's bound: more fail with
// ErrDeltaFull before anything is written.
func (c *Client) AppendFrom(ctx context.Context, name string, r io.Reader, opt LoadOptions) (*Appended, error) {
	in, err := c.Info(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := pirOnly(in, "Append"); err != nil {
		return nil, err
	}
	rr, err := dataset.NewRecordReader(r, opt.Records, in.pir().RecordSize, opt.RecordOptions())
	if err != nil {
		return nil, err
	}
	var recs [][]byte
	for total := 0; ; {
		rec, err := rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("client: append %s: %w", name, err)
		}
		if total += len(rec); total > in.deltaMax() {
			return nil, fmt.Errorf("client: append %s: %w: more than %d bytes of records", name, ErrDeltaFull, in.deltaMax())
		}
		recs = append(recs, append([]byte(nil), rec...))
	}
	return c.Append(ctx, name, recs...)
}
