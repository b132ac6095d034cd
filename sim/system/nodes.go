package system

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// The program as the simulator sees it: every IR node classified, placed on
// a device, profiled and cut into tiles.

// device is where a node runs: the plan's own sides.
type device = compiler.Device

const (
	onHost = compiler.Host
	onSSD  = compiler.SSD
)

// tier is where a value lives on a device.
type tier int

const (
	tierFree tier = iota // host on-chip memory (hidden by the pipeline, as in the cost model) or not modelled (CPU)
	tierSRAM
	tierDRAM // the SSD's LPDDR
	tierHBM
	tierNAND
)

// kind is what a node does in the simulation.
type kind int

const (
	kindInput kind = iota
	kindStored
	kindOutput
	kindPass // LevelDown: no work
	kindCompute
)

// node is one IR node's simulation state: placement, profile, tiling and
// progress, and where its value lives on each device.
type node struct {
	ir       ir.Node
	kind     kind
	dev      device
	prof     lower.Profile
	units    int64 // Count (groups for Sum)
	k        int64 // Sum: input instances per group
	tiles    int64
	issued   int64
	inflight int64
	done     int64
	finished bool
	streamed bool
	// hostFused: a host value the host accelerator produces and consumes
	// instance by instance (compiler.Streamable): held on chip, not in HBM.
	hostFused bool
	arrived   [2]bool
	tierOn    [2]tier
	bytes     int64 // all instances of the value
	logN      int
	users     []int
}

// build classifies the nodes, places them, profiles them and decides where
// each value lives.
func (x *exec) build() error {
	p := x.prog
	x.nodes = make([]*node, len(p.Nodes))
	prof := lower.Shared()
	// Tiles per node: MaxTiles, or fewer so that the whole program stays
	// within TileBudget tiles (at least 16 per node).
	computeNodes := int64(0)
	for _, n := range p.Nodes {
		switch n.Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput, ir.OpLevelDown:
		default:
			computeNodes++
		}
	}
	perNode := int64(x.opt.MaxTiles)
	if computeNodes > 0 {
		perNode = min(perNode, max(16, int64(x.opt.TileBudget)/computeNodes))
	}
	var params string
	for i, n := range p.Nodes {
		if n.ID != i {
			return fmt.Errorf("system: node %d has ID %d", i, n.ID)
		}
		if n.Count < 1 {
			return fmt.Errorf("system: node %d has count %d", i, n.Count)
		}
		for _, a := range n.Args {
			if a < 0 || a >= i {
				return fmt.Errorf("system: node %d has argument %d (not topological)", i, a)
			}
		}
		v := &node{ir: n, units: n.Count}
		switch n.Op {
		case ir.OpInput:
			v.kind, v.dev = kindInput, onHost
		case ir.OpStored:
			v.kind, v.dev = kindStored, onSSD
		case ir.OpOutput:
			v.kind, v.dev = kindOutput, onHost
		case ir.OpLevelDown:
			v.kind = kindPass
		case ir.OpBoot:
			return fmt.Errorf("system: node %d: Boot must be expanded by the compiler", i)
		default:
			v.kind = kindCompute
		}
		if v.kind == kindPass || v.kind == kindCompute {
			switch x.sys {
			case CPU, HA:
				v.dev = onHost
			case INSPIRE:
				v.dev = onSSD
			default:
				switch d := x.plan.Placement[i]; d {
				case onHost, onSSD:
					v.dev = d
				default:
					return fmt.Errorf("system: node %d placed on %v", i, d)
				}
			}
		}
		if len(n.Args) == 0 && (v.kind == kindCompute || v.kind == kindPass || v.kind == kindOutput) {
			return fmt.Errorf("system: node %d (%s) has no arguments", i, n.Op)
		}
		if v.kind == kindCompute {
			// The same operation/instance mapping as compiler.CostModel.Cost:
			// Sum folds k instances per group with k-1 HAdds.
			first := p.Nodes[n.Args[0]]
			if n.Op == ir.OpSum {
				if first.Count%n.Count != 0 || first.Count < n.Count {
					return fmt.Errorf("system: node %d: Sum of %d instances into %d groups", i, first.Count, n.Count)
				}
				v.k = first.Count / n.Count
			}
			pr, inst, err := prof.NodeWork(p, n)
			if err != nil {
				return fmt.Errorf("system: node %d: %w", i, err)
			}
			v.prof = pr
			if n.Op == ir.OpLWEScan {
				// One accumulator, many blocks: the blocks are the units, so
				// the scan pipelines its flash reads like any other node.
				v.units = inst
			}
			v.tiles = min(v.units, perNode)
			if minUnits := x.minTileUnits(v, p); minUnits > 1 {
				v.tiles = min(v.tiles, max(1, v.units/minUnits))
			}
		} else if v.kind == kindPass {
			v.tiles = 1
		}
		b, err := p.Bytes(n, x.wordBits)
		if err != nil {
			return fmt.Errorf("system: node %d: %w", i, err)
		}
		v.bytes = b * n.Count
		pr, err := fhe.Lookup(n.Params)
		if err != nil {
			return fmt.Errorf("system: node %d: %w", i, err)
		}
		v.logN = pr.LogN
		x.nodes[i] = v
		params = n.Params
		for _, a := range uniqInts(n.Args) {
			x.nodes[a].users = append(x.nodes[a].users, i)
		}
	}
	if err := x.keys(prof, params); err != nil {
		return err
	}
	x.streaming()
	var over []int
	var largest int64
	for _, v := range x.nodes {
		v.tierOn[onHost] = x.tierOf(v, onHost)
		v.tierOn[onSSD] = x.tierOf(v, onSSD)
		if v.kind != kindStored && v.tierOn[onSSD] == tierDRAM && x.usedOn(v, onSSD) && v.bytes > x.a.DRAM.CapacityBytes {
			over = append(over, v.ir.ID)
			largest = max(largest, v.bytes)
		}
	}
	if len(over) > 0 {
		x.notes = append(x.notes, fmt.Sprintf("%d SSD values (nodes %v, up to %d B) exceed the %d B LPDDR: charged at LPDDR bandwidth, as the compiler's cost model does, capacity not enforced",
			len(over), over, largest, x.a.DRAM.CapacityBytes))
	}
	return nil
}

// minTileUnits is the smallest tile (in units) of a node that reads stored
// data: one flash page per plane of the array, so that every die has a
// multi-plane read queued while the previous tiles are processed (the
// steady state the flash model's per-page time assumes). 8 MiB on the
// rosemary preset: three such tiles in flight fit its 32 MiB SRAM.
func (x *exec) minTileUnits(v *node, p *ir.Program) int64 {
	var pagesPerUnit int64
	for i, a := range v.ir.Args {
		if p.Nodes[a].Op != ir.OpStored || i >= len(v.prof.InputLimbs) {
			continue
		}
		perInst := v.prof.InputLimbs[i] * max(1, (int64(v.prof.N)*int64(x.wordBits)/8+int64(x.a.NAND.PageBytes)-1)/int64(x.a.NAND.PageBytes))
		if v.ir.Op == ir.OpSum {
			perInst *= v.k
		}
		pagesPerUnit += perInst
	}
	if pagesPerUnit == 0 {
		return 1
	}
	planes := int64(x.a.NAND.Planes())
	return (planes + pagesPerUnit - 1) / pagesPerUnit
}

// usedOn reports whether v's value is read or produced on device d.
func (x *exec) usedOn(v *node, d device) bool {
	if v.dev == d && v.kind == kindCompute {
		return true
	}
	for _, u := range v.users {
		if x.nodes[u].dev == d {
			return true
		}
	}
	return false
}

func uniqInts(s []int) []int {
	out := make([]int, 0, len(s))
	for _, v := range s {
		dup := false
		for _, w := range out {
			dup = dup || w == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

func (x *exec) limbBytes(v *node) int64 {
	return int64(v.prof.N) * int64(x.wordBits) / 8
}
