package compiler

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// ErrLWESegment reports a device segment holding an LWE scan that is not
// the whole answer of the database the scan names.
var ErrLWESegment = errors.New("compiler: not the answer of an LWE database")

// lweSegment is the stream program of device segment seg, which holds the
// LWE scan scan: the native answer program of the scan's database
// (lower.LWEProgram), which the device runs whole, scan and ring stage.
// So the segment must be that answer: every operation of the plan, the
// ring stage of the database's layout (its hint outputs, stored giant
// steps and rotations), keys of the parameters' hint ring.
func (p *Plan) lweSegment(seg int, scan ir.Node, inSeg map[int]bool, ring lower.Ring, scheme fhe.Scheme, t uint64) (*lower.StreamProgram, error) {
	if scan.LWE == nil {
		return nil, fmt.Errorf("%w: node %d: the scan names no database (ir.Node.LWE)", ErrLWESegment, scan.ID)
	}
	if err := p.Program.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLWESegment, err)
	}
	params, shape, err := scan.LWE.Shape()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLWESegment, err)
	}
	sp, err := lower.LWEProgram(p.Workload, params, shape)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLWESegment, err)
	}
	sp.Segment = seg
	if scheme != sp.Scheme || t != sp.T || ring.LogN != sp.Ring.LogN || !slices.Equal(ring.Q, sp.Ring.Q) || !slices.Equal(ring.P, sp.Ring.P) {
		return nil, fmt.Errorf("%w: the ring stage runs on the hint ring of parameters %q (%s, N=2^%d, T=%d)", ErrLWESegment, scan.LWE.Params, sp.Scheme, sp.Ring.LogN, sp.T)
	}
	l := shape.Layout(params)
	scans, outputs, steps := 0, 0, 0
	var rots []int
	for _, n := range p.Program.Nodes {
		switch {
		case n.Op == ir.OpInput:
		case n.Op == ir.OpOutput:
			if n.LWELimbs == 0 {
				outputs++
			}
		case !inSeg[n.ID]:
			return nil, fmt.Errorf("%w: node %d (%s) is outside segment %d, and the device runs the answer whole", ErrLWESegment, n.ID, n.Op, seg)
		case n.Op == ir.OpLWEScan:
			scans++
		case n.Op == ir.OpStored && n.LWELimbs == 0 && n.Count == int64(l.B1):
			steps++
		case n.Op == ir.OpHRot && !slices.Contains(rots, n.Rotation):
			rots = append(rots, n.Rotation)
		}
	}
	want := l.Rotations()
	slices.Sort(rots)
	slices.Sort(want)
	if scans != 1 || outputs != l.Outputs || steps != l.Outputs*l.B2 || !slices.Equal(rots, want) {
		return nil, fmt.Errorf("%w: %d scans, %d hint outputs, %d stored giant steps of %d diagonals, rotations %v; database %+v has 1, %d, %d, %v",
			ErrLWESegment, scans, outputs, steps, l.B1, rots, *scan.LWE, l.Outputs, l.Outputs*l.B2, want)
	}
	return sp, nil
}
