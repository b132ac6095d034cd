package compiler

import (
	"errors"
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// ErrLWESegment reports a device segment holding an LWE scan: it has no
// stream program.
var ErrLWESegment = errors.New("compiler: an LWE PIR segment has no stream program")

// StreamSegment builds the stream program of device segment seg of the
// plan for the ring ring (the primes of the keys in use). A segment
// holding an LWE scan has none: the device answers an LWE PIR query natively
// (its QueryLWE, package device/pirserver), and the plan only models it.
func (p *Plan) StreamSegment(seg int, ring lower.Ring, scheme fhe.Scheme, t uint64) (*lower.StreamProgram, error) {
	if seg < 0 || seg >= len(p.Segments) || !p.Segments[seg].OnSSD() {
		return nil, fmt.Errorf("compiler: segment %d is not a device segment", seg)
	}
	prog := p.Program
	users := prog.Users()
	inSeg := map[int]bool{}
	for _, v := range p.Segments[seg].Nodes {
		inSeg[v] = true
	}
	for _, v := range p.Segments[seg].Nodes {
		if prog.Nodes[v].Op == ir.OpLWEScan {
			return nil, fmt.Errorf("%w: node %d: the device answers an LWE PIR query natively (QueryLWE), not as a stream program", ErrLWESegment, v)
		}
	}
	sp := &lower.StreamProgram{Workload: p.Workload, Segment: seg, Scheme: scheme, T: t, Ring: ring}
	index := map[int]int{} // IR node → stream node
	// fused marks an HMult whose only user is a Relinearize in the segment
	// (the pair runs as one body, Lattigo's MulRelin) and a compact PMult
	// whose only user is a Sum (a multiply-accumulate loop).
	fused := map[int]bool{}
	var add func(v int) (int, error)
	add = func(v int) (int, error) {
		if i, ok := index[v]; ok {
			return i, nil
		}
		n := prog.Nodes[v]
		sn := lower.StreamNode{Node: v, Count: n.Count, Polys: n.Degree + 1, Limbs: n.Level + 1}
		if n.Degree == 0 {
			sn.Polys = 1
		}
		switch {
		case n.Op == ir.OpStored:
			sn.Kind, sn.Name, sn.Role, sn.Compact = lower.StreamStored, n.Name, n.Role, n.Compact
			if n.Compact {
				sn.Limbs = 1
			}
		case !inSeg[v] || n.Op == ir.OpInput:
			sn.Kind, sn.Name, sn.Role = lower.StreamInput, n.Name, n.Role
		default:
			args := n.Args
			if (n.Op == ir.OpRelinearize || n.Op == ir.OpSum) && fused[n.Args[0]] {
				args = prog.Nodes[n.Args[0]].Args
			}
			for _, a := range args {
				ai, err := add(a)
				if err != nil {
					return 0, err
				}
				sn.Args = append(sn.Args, ai)
			}
			first := prog.Nodes[args[0]]
			ctx := &lower.Context{Scheme: scheme, Ring: ring, T: t, Level: first.Level, Rotation: n.Rotation}
			var err error
			if n.Window {
				return 0, fmt.Errorf("compiler: node %d: a PMult of a window of stored plaintexts has no stream form", v)
			}
			switch n.Op {
			case ir.OpSum:
				sn.Kind = lower.StreamSum
				if fused[n.Args[0]] {
					sn.MAC, err = lower.MACCompact(ctx, lower.MACLanes)
					sn.Products = prog.Nodes[n.Args[0]].Count
					break
				}
				if first.Degree != 1 {
					return 0, fmt.Errorf("compiler: node %d: a Sum of degree-%d values has no device lowering", v, first.Degree)
				}
				sn.Body, err = lower.Op(ir.OpHAdd, ctx)
			case ir.OpExpand:
				sn.Kind, sn.Expand = lower.StreamExpand, n.Expand
				for j := 0; j < n.Expand.Depth(n.Count); j++ {
					ctx.Depth = j
					step, err := lower.Op(lower.OpExpandStep, ctx)
					if err != nil {
						return 0, fmt.Errorf("compiler: node %d: %w", v, err)
					}
					sn.Steps = append(sn.Steps, step)
				}
			case ir.OpLevelDown, ir.OpBoot, ir.OpCMult:
				return 0, fmt.Errorf("compiler: node %d: %s has no streaming device lowering", v, n.Op)
			case ir.OpRelinearize:
				sn.Kind = lower.StreamOp
				if fused[n.Args[0]] {
					sn.Body, err = lower.MulRelin(ctx)
				} else {
					sn.Body, err = lower.Op(n.Op, ctx)
				}
			default:
				sn.Kind = lower.StreamOp
				sn.Body, err = lower.Op(lower.NodeOp(prog, n), ctx)
			}
			if err != nil {
				return 0, fmt.Errorf("compiler: node %d: %w", v, err)
			}
		}
		if len(sp.Nodes) >= lower.MaxStreamNodes {
			return 0, fmt.Errorf("compiler: segment %d exceeds %d stream nodes", seg, lower.MaxStreamNodes)
		}
		index[v] = len(sp.Nodes)
		sp.Nodes = append(sp.Nodes, sn)
		return index[v], nil
	}
	for _, v := range p.Segments[seg].Nodes {
		n := prog.Nodes[v]
		if len(users[v]) != 1 || !inSeg[users[v][0]] {
			continue
		}
		switch u := prog.Nodes[users[v][0]]; {
		case n.Op == ir.OpHMult && u.Op == ir.OpRelinearize:
			fused[v] = true
		case lower.NodeOp(prog, n) == lower.OpPMultCompact && u.Op == ir.OpSum:
			fused[v] = true
		}
	}
	for _, v := range p.Segments[seg].Nodes {
		n := prog.Nodes[v]
		if n.Op == ir.OpInput || n.Op == ir.OpOutput || fused[v] {
			continue
		}
		if n.Op == ir.OpStored && !usedIn(users[v], inSeg) {
			continue
		}
		if _, err := add(v); err != nil {
			return nil, err
		}
	}
	if len(sp.Nodes) == 0 {
		return nil, fmt.Errorf("compiler: device segment %d computes nothing (only stored data)", seg)
	}
	// How often each instance is read decides what is held: all of a
	// node's instances when a consumer reads each of them for several of
	// its own (broadcast), instance k only until its last reader when
	// several consumers read it for their instance k alone (aligned).
	uses := make([]int64, len(sp.Nodes))
	broadcast := make([]bool, len(sp.Nodes))
	for _, sn := range sp.Nodes {
		for _, a := range sn.Args {
			if sn.MAC != nil {
				uses[a] += sn.Products / sp.Nodes[a].Count
				broadcast[a] = broadcast[a] || sn.Products > sp.Nodes[a].Count
				continue
			}
			if sn.Kind == lower.StreamSum {
				uses[a]++ // each argument instance is folded once
				continue
			}
			uses[a] += sn.Count / sp.Nodes[a].Count
			broadcast[a] = broadcast[a] || sn.Count > sp.Nodes[a].Count
		}
	}
	for i := range sp.Nodes {
		sn := &sp.Nodes[i]
		if sn.Kind == lower.StreamInput || sn.Kind == lower.StreamStored {
			continue
		}
		for _, u := range users[sn.Node] {
			if !inSeg[u] || prog.Nodes[u].Op == ir.OpOutput {
				sn.Out = true
			}
		}
		switch {
		case uses[i] <= 1:
		case broadcast[i] || sn.Out || sn.Kind == lower.StreamExpand:
			sn.Cache = true
		default:
			sn.Memo = int(uses[i])
		}
	}
	return sp, sp.Validate()
}

func usedIn(users []int, inSeg map[int]bool) bool {
	for _, u := range users {
		if inSeg[u] {
			return true
		}
	}
	return false
}
