package engine

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// This file holds the resident-value bookkeeping: values fetched from the
// device, released after their last use, and the bytes that cross.

// materialize fetches the device-only values of vs to the host.
func (x *Executor) materialize(ctx context.Context, vs []Value) error {
	for k := range vs {
		v := &vs[k]
		if v.Ct != nil || v.Pt != nil || v.Dev == nil {
			continue
		}
		if v.Dev.Stored {
			return fmt.Errorf("stored object %q is held only by the device", v.Dev.Ref)
		}
		limbs, err := x.res.Fetch(ctx, v.Dev.Ref)
		if err != nil {
			return fmt.Errorf("fetch %q: %w", v.Dev.Ref, err)
		}
		ct := rlwe.NewCiphertext(x.Params, v.Dev.Degree, v.Dev.Level)
		if !CopyLimbs(limbs, ct.Value, v.Dev.Level+1) {
			return fmt.Errorf("device value %q has %d limbs, want %d×%d", v.Dev.Ref, len(limbs), v.Dev.Degree+1, v.Dev.Level+1)
		}
		*ct.MetaData = v.Dev.Meta
		v.Ct = ct
		x.Stats.BytesFromDevice += v.Dev.Bytes
	}
	return nil
}

// release frees the resident copies of node a's value once node i, its
// last reader, has run.
func (x *Executor) release(ctx context.Context, p *ir.Program, a int, vals [][]Value, lastUse []int, i int) {
	if lastUse[a] != i || p.Nodes[a].Op == ir.OpStored {
		return
	}
	// A Sum of one instance per group passes its argument's values on:
	// references node i still holds stay.
	live := map[Ref]bool{}
	for _, v := range vals[i] {
		if v.Dev != nil {
			live[v.Dev.Ref] = true
		}
	}
	var refs []Ref
	for k := range vals[a] {
		if d := vals[a][k].Dev; d != nil && !d.Stored && !live[d.Ref] {
			refs = append(refs, d.Ref)
			vals[a][k].Dev = nil
		}
	}
	x.free(ctx, refs...)
}

// free drops resident values now; failures leave them in temps for the
// final sweep.
func (x *Executor) free(ctx context.Context, refs ...Ref) {
	if len(refs) == 0 {
		return
	}
	if err := x.res.Free(ctx, refs...); err != nil {
		return
	}
	drop := map[Ref]bool{}
	for _, r := range refs {
		drop[r] = true
	}
	kept := x.temps[:0]
	for _, r := range x.temps {
		if !drop[r] {
			kept = append(kept, r)
		}
	}
	x.temps = kept
}

func (x *Executor) countCross(p *ir.Program, v int, vals [][]Value, toDevice bool, crossed map[[2]int]bool) {
	key := [2]int{v, 0}
	if toDevice {
		key[1] = 1
	}
	if crossed[key] {
		return
	}
	crossed[key] = true
	if toDevice {
		x.Stats.BytesToDevice += x.nodeBytes(p, v, vals)
	} else {
		x.Stats.BytesFromDevice += x.nodeBytes(p, v, vals)
	}
}

// nodeBytes is the size of node v's value as it is held: a compact stored
// plaintext is one limb per instance, whatever form the host holds it in.
func (x *Executor) nodeBytes(p *ir.Program, v int, vals [][]Value) int64 {
	if n := p.Nodes[v]; n.Compact {
		if b, err := p.Bytes(n, 8*WordBytes); err == nil {
			return b * int64(len(vals[v]))
		}
	}
	return valueBytes(vals[v])
}
