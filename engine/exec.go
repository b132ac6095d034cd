package engine

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Keys are the evaluation keys an execution may need.
type Keys struct {
	Relin  *rlwe.RelinearizationKey
	Galois map[uint64]*rlwe.GaloisKey
}

// ExecStats counts what an execution did.
type ExecStats struct {
	HostOps, DeviceOps int64
	DeviceMicroOps     int64
	// Bytes of ciphertexts and plaintexts crossing host↔device (8-byte
	// words as held here), once per value instance and direction.
	BytesToDevice, BytesFromDevice int64
	// KeyBytesToDevice counts evaluation keys shipped with operations
	// (resident mode without KeyRef); keys referenced on the device cost 0.
	KeyBytesToDevice int64
	// DeviceStoredBytes is the stored data the device read next to the
	// data (it never crossed the link).
	DeviceStoredBytes int64
}

// Executor runs IR programs with real ciphertexts: nodes placed on the
// host with Lattigo's evaluator, nodes placed on the device as lowered
// mPrograms through a DeviceRunner.
//
// With a ResidentDevice, values stay where they are computed: a host value
// is uploaded once, the first time a device node reads it; a device result
// is fetched once, the first time a host node or an Output needs it; stored
// values given as Dev references are read by the device in place, and
// resident intermediates are freed after their last reader.
type Executor struct {
	Preset fhe.Preset
	Params rlwe.Parameters
	Keys   Keys
	// OnDevice reports whether node i runs on the device (nil: all host).
	OnDevice func(i int) bool
	Device   DeviceRunner
	// KeyRef, if set, names the device-stored key of an operation (the
	// relinearization key, or the Galois key of element galEl); the zero
	// Ref ships the key's limbs instead.
	KeyRef func(op ir.Op, galEl uint64) Ref
	// Constants resolves named constants (CMult nodes with a Name, such as
	// the bootstrapping constants of compiler.ExpandBoot); nil refuses them.
	Constants ConstantProvider
	// Diagonals, if set, lets bootstrapping DFT products run as Lattigo's
	// hoisted programs (DiagonalProvider).
	Diagonals DiagonalProvider
	Stats     ExecStats
	// Values holds every node's instances after Run (in resident mode,
	// values already freed on the device are absent; so are the values
	// inside a linear transform run as one program, DiagonalProvider).
	Values [][]Value

	ckks   ckks.Parameters
	bgv    bgv.Parameters
	ckEval *ckks.Evaluator
	bgEval *bgv.Evaluator
	lowers map[string]*lower.Program
	res    ResidentDevice // non-nil in resident mode (set per Run)
	temps  []Ref          // resident refs created by the current Run
	// users of usersOf's nodes (named constants look up their reader).
	users   [][]int
	usersOf *ir.Program
	// transforms caches the lowered linear transforms by level, slots and
	// diagonals.
	transforms map[string]*lower.LinearTransformProgram
}

// NewExecutor prepares an executor; params is ckks.Parameters or
// bgv.Parameters (the scheme must match the preset's).
func NewExecutor(preset fhe.Preset, params any, keys Keys) (*Executor, error) {
	x := &Executor{Preset: preset, Keys: keys, Device: LocalDevice{}, lowers: map[string]*lower.Program{}}
	var gks []*rlwe.GaloisKey
	for _, g := range keys.Galois {
		gks = append(gks, g)
	}
	evk := rlwe.NewMemEvaluationKeySet(keys.Relin, gks...)
	switch p := params.(type) {
	case ckks.Parameters:
		if preset.Scheme != fhe.CKKS {
			return nil, fmt.Errorf("engine: CKKS parameters for a %s preset", preset.Scheme)
		}
		x.ckks, x.Params = p, p.Parameters
		x.ckEval = ckks.NewEvaluator(p, evk)
	case bgv.Parameters:
		if preset.Scheme != fhe.BGV {
			return nil, fmt.Errorf("engine: BGV parameters for a %s preset", preset.Scheme)
		}
		x.bgv, x.Params = p, p.Parameters
		x.bgEval = bgv.NewEvaluator(p, evk)
	default:
		return nil, fmt.Errorf("engine: unsupported parameters %T", params)
	}
	return x, nil
}

// Run executes p under ctx (which the device calls run under). inputs and
// stored give the instances of each Input and Stored node by name; the
// result maps each Output name to its instances.
func (x *Executor) Run(ctx context.Context, p *ir.Program, inputs, stored map[string][]Value) (map[string][]Value, error) {
	for _, n := range p.Nodes {
		if n.LWELimbs > 0 || n.Window {
			return nil, fmt.Errorf("engine: node %d: LWE PIR answers run natively on the device (QueryLWE); the executor runs RLWE programs", n.ID)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	x.res, _ = x.Device.(ResidentDevice)
	x.temps = x.temps[:0]
	out, err := x.run(ctx, p, inputs, stored)
	if x.res != nil && len(x.temps) > 0 {
		// Drop whatever is still resident (error paths, unread values).
		if ferr := x.res.Free(ctx, x.temps...); ferr != nil && err == nil {
			err = fmt.Errorf("engine: free resident values: %w", ferr)
		}
	}
	x.temps = x.temps[:0]
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (x *Executor) run(ctx context.Context, p *ir.Program, inputs, stored map[string][]Value) (map[string][]Value, error) {
	vals := make([][]Value, len(p.Nodes))
	onDev := func(i int) bool { return x.OnDevice != nil && x.OnDevice(i) }
	// crossed[v][d] marks value v already moved to device d (true = device).
	crossed := map[[2]int]bool{}
	lastUse := make([]int, len(p.Nodes))
	for i, n := range p.Nodes {
		for _, a := range n.Args {
			lastUse[a] = i
		}
	}
	out := map[string][]Value{}
	ltHeads, ltSkip := x.linearTransformGroups(p, onDev)
	for i, n := range p.Nodes {
		var err error
		if ltSkip[i] {
			continue // computed inside its linear transform
		}
		if g := ltHeads[i]; g != nil {
			if !onDev(g.input) {
				x.countCross(p, g.input, vals, true, crossed)
			}
			for _, s := range g.stored {
				x.Stats.DeviceStoredBytes += x.nodeBytes(p, s, vals)
			}
			if vals[i], err = x.runLinearTransform(p, i, g, vals); err != nil {
				return nil, fmt.Errorf("engine: node %d (%s): %w", i, n.Name, err)
			}
			continue
		}
		switch n.Op {
		case ir.OpInput, ir.OpStored:
			v, err := sourceValues(n, inputs, stored)
			if err != nil {
				return nil, err
			}
			// A copy: resident mode records uploads in the values.
			vals[i] = append([]Value(nil), v...)
			continue
		case ir.OpOutput:
			if x.res != nil {
				if err := x.materialize(ctx, vals[n.Args[0]]); err != nil {
					return nil, fmt.Errorf("engine: output %q: %w", n.Name, err)
				}
				x.release(ctx, p, n.Args[0], vals, lastUse, i)
			} else if onDev(n.Args[0]) {
				x.countCross(p, n.Args[0], vals, false, crossed)
			}
			vals[i] = vals[n.Args[0]]
			out[n.Name] = vals[i]
			continue
		}
		for _, a := range n.Args {
			an := p.Nodes[a]
			if x.res == nil && onDev(i) != onDev(a) && !(onDev(i) && an.Op == ir.OpStored) {
				x.countCross(p, a, vals, onDev(i), crossed)
			}
			if onDev(i) && an.Op == ir.OpStored {
				x.Stats.DeviceStoredBytes += x.nodeBytes(p, a, vals)
			}
		}
		if onDev(i) {
			vals[i], err = x.runDevice(ctx, p, n, vals)
			x.Stats.DeviceOps += n.Count
		} else {
			if x.res != nil {
				for _, a := range n.Args {
					if err = x.materialize(ctx, vals[a]); err != nil {
						break
					}
				}
			}
			if err == nil {
				vals[i], err = x.runHost(p, n, vals)
			}
			x.Stats.HostOps += n.Count
		}
		if err != nil {
			return nil, fmt.Errorf("engine: node %d (%s): %w", i, n.Op, err)
		}
		if x.res != nil {
			for _, a := range n.Args {
				x.release(ctx, p, a, vals, lastUse, i)
			}
		}
	}
	x.Values = vals
	return out, nil
}

// sourceValues returns the instances given for an Input or Stored node.
func sourceValues(n ir.Node, inputs, stored map[string][]Value) ([]Value, error) {
	src := inputs
	if n.Op == ir.OpStored {
		src = stored
	}
	v, ok := src[n.Name]
	if !ok || int64(len(v)) != n.Count {
		return nil, fmt.Errorf("engine: node %d: %s %q needs %d instances, got %d", n.ID, n.Op, n.Name, n.Count, len(v))
	}
	return v, nil
}
