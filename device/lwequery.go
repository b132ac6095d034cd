package device

import (
	"context"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// QueryLWE answers one query of an LWE PIR database generation: the typed
// PIR service. The device builds the answer program of the shape itself —
// the one RunStream accepts for it — and runs it as a RunStream of it
// would, on the generation's tiles and diagonals and the caller's Galois
// keys: the same admission, batching, deadline and checks, no program set.
func (d *Device) QueryLWE(ctx context.Context, req *api.LWEQueryRequest) (*api.RunStreamResponse, error) {
	p, err := lwepir.ByName(req.Params)
	if err != nil {
		return nil, fmt.Errorf("device: querylwe: %w: %w", api.ErrInvalid, err)
	}
	shape := lwepir.Shape{Rows: req.Rows, Cols: req.Cols, RecordSize: req.RecordSize}
	if err := shape.Validate(p); err != nil {
		return nil, fmt.Errorf("device: querylwe: %w: %w", api.ErrInvalid, err)
	}
	lp, err := d.lweQueries.program(p, shape, d.lim.Workers)
	if err != nil {
		return nil, err
	}
	rs := &api.RunStreamRequest{Program: "lwe/" + req.Params,
		Inputs: []api.StreamValues{{Node: lower.LWEQuery, Instances: req.Query}, {Node: lower.LWESecret, Instances: [][][]uint64{req.Secret}}},
		Stored: []api.StoredBinding{{Node: lower.LWETiles, Prefix: objname.LWETiles(req.Generation), PerObject: 1},
			{Node: lower.LWEDiagonals, Prefix: objname.LWEDiagonals(req.Generation), PerObject: 1}}}
	for _, r := range shape.Layout(p).Rotations() {
		rs.Keys = append(rs.Keys, api.KeyBinding{Key: lower.LWEKey(r), Object: req.Keys + lower.LWEKey(r)})
	}
	return d.runLWE(ctx, rs.Program, lp, rs)
}

// lweQueryPrograms keeps the answer programs QueryLWE built, by parameter
// set and shape: a server's precomputation is per shape, not per query.
// Bounded: past maxLWEQueryPrograms shapes it starts again.
type lweQueryPrograms struct {
	mu sync.Mutex
	m  map[lower.LWESpec]*lweProgram
}

const maxLWEQueryPrograms = 64

func (t *lweQueryPrograms) program(p lwepir.Params, shape lwepir.Shape, workers int) (*lweProgram, error) {
	spec := lower.LWESpec{Params: p.Name(), Rows: shape.Rows, Cols: shape.Cols, RecordSize: shape.RecordSize}
	t.mu.Lock()
	defer t.mu.Unlock()
	if lp, ok := t.m[spec]; ok {
		return lp, nil
	}
	sp, err := lower.LWEProgram("lwepir", p, shape)
	if err != nil {
		return nil, fmt.Errorf("device: querylwe: %w: %w", api.ErrInvalid, err)
	}
	lp, err := newLWEProgram(sp, workers)
	if err != nil {
		return nil, fmt.Errorf("device: querylwe: %w: %w", api.ErrInvalid, err)
	}
	if t.m == nil || len(t.m) >= maxLWEQueryPrograms {
		t.m = map[lower.LWESpec]*lweProgram{}
	}
	t.m[spec] = lp
	return lp, nil
}
