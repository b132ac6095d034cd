package engine

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// SegmentRunner runs one device segment of a plan as its stream program
// (lower.StreamProgram) under ctx: inputs are the instances of the program's
// StreamInput nodes by IR node, the result the instances of its Out nodes
// by IR node, and the micro-ops the device ran.
type SegmentRunner interface {
	RunSegment(ctx context.Context, seg int, inputs map[int][]Limbs) (map[int][]Limbs, int64, error)
}

// Segment is one segment of a plan as RunSegments executes it: nodes of
// the program in execution order, on the host or on the device, and for a
// device segment that computes, the stream program it runs as. The planner
// (package compiler) decides the segments; the caller hands them over in
// this form, so the executor needs no planner.
type Segment struct {
	OnDevice bool
	Nodes    []int
	Stream   *lower.StreamProgram
}

// RunSegments executes program p under ctx segment by segment, in order: host
// segments node by node with Lattigo's evaluator, each device segment as
// one run of its stream program through runner. Inputs and stored give the
// Input and Stored instances by name (stored values a host node reads must
// hold their plaintexts); the result maps each Output name to its
// instances.
func (x *Executor) RunSegments(ctx context.Context, p *ir.Program, segs []Segment, runner SegmentRunner,
	inputs, stored map[string][]Value) (map[string][]Value, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	vals := make([][]Value, len(p.Nodes))
	for i, n := range p.Nodes {
		if n.Op != ir.OpInput && n.Op != ir.OpStored {
			continue
		}
		v, err := sourceValues(n, inputs, stored)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	out := map[string][]Value{}
	for si, seg := range segs {
		if seg.OnDevice {
			sp := seg.Stream
			if sp == nil {
				if computes(p, seg.Nodes) {
					return nil, fmt.Errorf("engine: device segment %d has no stream program", si)
				}
				continue
			}
			if err := x.runStream(ctx, p, sp, si, seg.Nodes, runner, vals); err != nil {
				return nil, fmt.Errorf("engine: device segment %d: %w", si, err)
			}
			continue
		}
		for _, v := range seg.Nodes {
			n := p.Nodes[v]
			switch n.Op {
			case ir.OpInput, ir.OpStored:
				continue
			case ir.OpOutput:
				vals[v] = vals[n.Args[0]]
				out[n.Name] = vals[v]
				continue
			}
			for _, a := range n.Args {
				if vals[a] == nil {
					return nil, fmt.Errorf("engine: node %d reads node %d, which no earlier segment produced", v, a)
				}
			}
			var err error
			if vals[v], err = x.runHost(p, n, vals); err != nil {
				return nil, fmt.Errorf("engine: node %d (%s): %w", v, n.Op, err)
			}
			x.Stats.HostOps += n.Count
		}
	}
	for _, n := range p.Nodes {
		if n.Op == ir.OpOutput && out[n.Name] == nil {
			if vals[n.Args[0]] == nil {
				return nil, fmt.Errorf("engine: output %q was never produced", n.Name)
			}
			out[n.Name] = vals[n.Args[0]]
		}
	}
	x.Values = vals
	return out, nil
}

// computes reports whether nodes include an operation (not only sources
// and sinks: Input, Stored, Output).
func computes(p *ir.Program, nodes []int) bool {
	for _, v := range nodes {
		switch p.Nodes[v].Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput:
		default:
			return true
		}
	}
	return false
}

// runStream runs device segment si: its inputs go as limbs, its results
// come back as host ciphertexts labelled with the metadata the segment's
// operations give them.
func (x *Executor) runStream(ctx context.Context, p *ir.Program, sp *lower.StreamProgram, si int, nodes []int, runner SegmentRunner, vals [][]Value) error {
	in := map[int][]Limbs{}
	inSeg := map[int]bool{}
	for _, v := range nodes {
		switch p.Nodes[v].Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput:
		default:
			inSeg[v] = true
		}
	}
	for _, sn := range sp.Nodes {
		if sn.Kind != lower.StreamInput {
			continue
		}
		vs := vals[sn.Node]
		if vs == nil {
			return fmt.Errorf("input node %d was never produced", sn.Node)
		}
		for _, v := range vs {
			if v.Ct == nil {
				return fmt.Errorf("input node %d is not a host ciphertext", sn.Node)
			}
			var limbs Limbs
			for _, poly := range v.Ct.Value {
				limbs = append(limbs, poly.Coeffs[:sn.Limbs]...)
			}
			in[sn.Node] = append(in[sn.Node], limbs)
			x.Stats.BytesToDevice += int64(len(limbs)) * int64(len(limbs[0])) * WordBytes
		}
	}
	res, microOps, err := runner.RunSegment(ctx, si, in)
	if err != nil {
		return err
	}
	x.Stats.DeviceMicroOps += microOps
	// Metadata of every node of the segment, in program order.
	var sc scaler = x.bgv
	if x.ckEval != nil {
		sc = x.ckks
	}
	md := map[int]rlwe.MetaData{}
	meta := func(a int) (*rlwe.MetaData, error) {
		if m, ok := md[a]; ok {
			return &m, nil
		}
		if len(vals[a]) == 0 || vals[a][0].meta() == nil {
			return nil, fmt.Errorf("no metadata for node %d", a)
		}
		return vals[a][0].meta(), nil
	}
	for i, n := range p.Nodes {
		if !inSeg[i] {
			continue
		}
		if n.Op == ir.OpCMult || n.Op == ir.OpBoot {
			return fmt.Errorf("node %d: %s has no stream metadata rule", i, n.Op)
		}
		a, err := meta(n.Args[0])
		if err != nil {
			return err
		}
		b := a
		if len(n.Args) > 1 {
			if b, err = meta(n.Args[1]); err != nil {
				return err
			}
		}
		md[i] = resultMeta(lower.NodeOp(p, n), a, b, rlwe.NewScale(1), x.Params.Q()[p.Nodes[n.Args[0]].Level], sc)
		x.Stats.DeviceOps += n.Count
	}
	for _, sn := range sp.Nodes {
		if !sn.Out {
			continue
		}
		got := res[sn.Node]
		if int64(len(got)) != sn.Count {
			return fmt.Errorf("the device returned %d instances of node %d, want %d", len(got), sn.Node, sn.Count)
		}
		vs := make([]Value, sn.Count)
		for k, limbs := range got {
			ct := rlwe.NewCiphertext(x.Params, sn.Polys-1, sn.Limbs-1)
			*ct.MetaData = md[sn.Node]
			if !CopyLimbs(limbs, ct.Value, sn.Limbs) {
				return fmt.Errorf("the device returned %d limbs for node %d, want %d × %d", len(limbs), sn.Node, sn.Polys, sn.Limbs)
			}
			x.Stats.BytesFromDevice += int64(len(limbs)) * int64(len(limbs[0])) * WordBytes
			vs[k] = Value{Ct: ct}
		}
		vals[sn.Node] = vs
	}
	return nil
}
