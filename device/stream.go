package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/guard"
	"github.com/rosemary-fhe/rosemary/device/pirserver"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
)

// streamTable is the device's registered stream programs and the
// evaluation keys they read, decoded once; both are kept per caller
// (callerTable), so no caller fills them for the others.
type streamTable struct {
	progs *callerTable[*registeredStream]
	// keys holds decoded key objects by caller, name and generation (a
	// replaced key is never served stale; the old one ages out), weighed
	// in bytes.
	keys *callerTable[engine.Limbs]
}

type registeredStream struct {
	raw    string
	nodes  int
	stream *engine.Stream
}

func newStreamTable(lim Limits) streamTable {
	return streamTable{progs: newCallerTable[*registeredStream]("stream programs", int64(lim.MaxProgramsPerCaller), int64(lim.MaxPrograms)),
		keys: newCallerTable[engine.Limbs]("key bytes", lim.StreamKeyBytesPerCaller, lim.StreamKeyBytes)}
}

// keyEntry names a decoded key object of caller in the key table.
func keyEntry(caller, name string, gen store.Generation) string {
	return fmt.Sprintf("%s\x00%s\x00%d", caller, name, gen)
}

// SetStream registers a stream program, charged to the caller
// (Limits.MaxProgramsPerCaller).
func (d *Device) SetStream(ctx context.Context, req *devicepb.SetStreamRequest) (*devicepb.SetStreamResponse, error) {
	if err := api.CheckObjectName("name", req.Name); err != nil {
		return nil, err
	}
	t := &d.streams
	if old, ok := t.progs.get(req.Name); ok {
		if old.raw != string(req.Program) {
			return nil, fmt.Errorf("device: setstream %q: %w: name taken by a different program", req.Name, api.ErrInvalid)
		}
		return &devicepb.SetStreamResponse{Nodes: uint32(old.nodes)}, nil
	}
	var sp lower.StreamProgram
	if err := sp.UnmarshalBinary(req.Program); err != nil {
		return nil, fmt.Errorf("device: setstream %q: %w: %w", req.Name, api.ErrInvalid, err)
	}
	reg := &registeredStream{raw: string(req.Program), nodes: len(sp.Nodes)}
	var err error
	if reg.stream, err = engine.NewStream(&sp); err != nil {
		return nil, fmt.Errorf("device: setstream %q: %w: %w", req.Name, api.ErrInvalid, err)
	}
	set, _, err := t.progs.add(quotaCaller(ctx), req.Name, reg, 1)
	if err != nil {
		return nil, fmt.Errorf("device: setstream %q: %w", req.Name, err)
	}
	if set.raw != reg.raw {
		return nil, fmt.Errorf("device: setstream %q: %w: name taken by a different program", req.Name, api.ErrInvalid)
	}
	return &devicepb.SetStreamResponse{Nodes: uint32(set.nodes)}, nil
}

// RunStream runs a registered stream program in ISP mode: every worker
// evaluates its share, stored objects are pinned for the run and read
// ahead, and the run's value memory is bounded by MaxResidentBytes.
func (d *Device) RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	start := time.Now()
	if err := api.CheckRunStream(req); err != nil {
		return nil, fmt.Errorf("device: runstream: %w", err)
	}
	reg, ok := d.streams.progs.get(req.Program)
	if !ok {
		return nil, fmt.Errorf("device: runstream: %w: program %q not set", api.ErrNotFound, req.Program)
	}
	caller := "in-process"
	if id, ok := guard.IdentityFrom(ctx); ok {
		caller = id.Name
	}
	share := d.cores.For(caller)
	sp := reg.stream.Program()
	src := &streamSource{d: d, caller: quotaCaller(ctx), sp: sp, inputs: map[int][]engine.Limbs{}, stored: map[int]*pinnedSet{}, keys: map[string]string{},
		moduli: append(append([]uint64(nil), sp.Ring.Q...), sp.Ring.P...)}
	src.cache = newObjectCache(ctx, 4+4*d.lim.Workers, src.countRead, share)
	defer func() {
		for _, ps := range src.stored {
			ps.release()
		}
	}()
	byNode := map[int]int{}
	for i, sn := range sp.Nodes {
		byNode[sn.Node] = i
	}
	for _, in := range req.Inputs {
		i, ok := byNode[int(in.GetNode())]
		if !ok || sp.Nodes[i].Kind != lower.StreamInput {
			return nil, fmt.Errorf("device: runstream: %w: node %d is not an input of %q", api.ErrInvalid, in.GetNode(), req.Program)
		}
		vals, err := api.DecodeInstances("input", in)
		if err != nil {
			return nil, fmt.Errorf("device: runstream: %w", err)
		}
		if err := checkInstances(sp.Nodes[i], vals, sp.Ring.Q, 1<<sp.Ring.LogN); err != nil {
			return nil, fmt.Errorf("device: runstream: input node %d: %w", in.GetNode(), err)
		}
		src.inputs[i] = vals
	}
	for _, b := range req.Stored {
		i, ok := byNode[int(b.GetNode())]
		if !ok || sp.Nodes[i].Kind != lower.StreamStored {
			return nil, fmt.Errorf("device: runstream: %w: node %d is not a stored node of %q", api.ErrInvalid, b.Node, req.Program)
		}
		ps, err := d.pin(sp.Nodes[i], b, sp.Ring.LogN)
		if err != nil {
			return nil, fmt.Errorf("device: runstream: %w", err)
		}
		if old := src.stored[i]; old != nil {
			old.release()
		}
		src.stored[i] = ps
	}
	for _, k := range req.Keys {
		if k.GetObject() == "" {
			return nil, fmt.Errorf("device: runstream: %w: key %q bound to no object", api.ErrInvalid, k.GetKey())
		}
		src.keys[k.GetKey()] = k.GetObject()
	}
	for i, sn := range sp.Nodes {
		switch {
		case sn.Kind == lower.StreamInput && src.inputs[i] == nil:
			return nil, fmt.Errorf("device: runstream: %w: input %q (node %d) not sent", api.ErrInvalid, sn.Name, sn.Node)
		case sn.Kind == lower.StreamStored && src.stored[i] == nil:
			return nil, fmt.Errorf("device: runstream: %w: stored %q (node %d) not bound", api.ErrInvalid, sn.Name, sn.Node)
		}
	}
	// Admission: runs of different callers share the device in turn (one
	// caller looping long scans cannot starve another), a full queue
	// refuses at once, and a run has the device's deadline. Once
	// running, its bodies, reads and decodes take the caller's share of
	// the cores chunk by chunk (admit.Cores).
	release, err := d.runs.Acquire(ctx, caller)
	if err != nil {
		return nil, fmt.Errorf("device: runstream: %w", err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, d.lim.RunTimeout)
	defer cancel()
	d.enterISP()
	defer d.leaveISP()
	out, st, err := reg.stream.Run(ctx, src, engine.StreamOptions{Workers: d.lim.Workers,
		MaxBytes: d.lim.MaxResidentBytes / int64(d.lim.Runs), Gate: share})
	d.storeRead.Add(src.storeBytes)
	d.microOps.Add(st.MicroOps)
	d.instrs.Add(st.Instructions)
	d.jobsRun.Add(1)
	if err != nil {
		if errors.Is(err, engine.ErrStreamMemory) {
			return nil, fmt.Errorf("device: runstream %q: %w: %w", req.Program, api.ErrExhausted, err)
		}
		return nil, fmt.Errorf("device: runstream %q: %w", req.Program, err)
	}
	resp := &devicepb.RunStreamResponse{StoreBytes: uint64(src.storeBytes), Instructions: uint64(st.Instructions), MicroOps: uint64(st.MicroOps),
		Bodies: uint64(st.Bodies), Stored: uint64(st.StoredInstances), PeakBytes: uint64(st.PeakBytes),
		Cores: []*devicepb.CoreUse{pirserver.CoreUse("stream", time.Since(start), share.Stats(), 1)}}
	for i, v := range out {
		resp.Outputs = append(resp.Outputs, &devicepb.StreamValues{Node: uint32(sp.Nodes[i].Node), Instances: api.Instances(v)})
	}
	resp.Seconds = time.Since(start).Seconds()
	return resp, nil
}

// checkInstances checks a node's instances from a request: shape and
// residues below their moduli.
func checkInstances(sn lower.StreamNode, vals []engine.Limbs, q []uint64, n int) error {
	if int64(len(vals)) != sn.Count {
		return fmt.Errorf("%w: %d instances, the node has %d", api.ErrInvalid, len(vals), sn.Count)
	}
	for k, v := range vals {
		if len(v) != sn.Polys*sn.Limbs {
			return fmt.Errorf("%w: instance %d has %d limbs, want %d × %d", api.ErrInvalid, k, len(v), sn.Polys, sn.Limbs)
		}
		for l, limb := range v {
			if len(limb) != n {
				return fmt.Errorf("%w: instance %d limb %d has %d coefficients, want %d", api.ErrInvalid, k, l, len(limb), n)
			}
			m := q[l%sn.Limbs]
			for i, c := range limb {
				if c >= m {
					return fmt.Errorf("%w: instance %d limb %d coefficient %d is %d, not below q = %d", api.ErrInvalid, k, l, i, c, m)
				}
			}
		}
	}
	return nil
}

// streamKey returns a stored key object decoded (and checked), cached for
// caller by generation.
func (d *Device) streamKey(caller, name string, moduli []uint64) (engine.Limbs, error) {
	o, err := d.st.Acquire(name)
	if err != nil {
		return nil, fmt.Errorf("%w: key object %q: %w", api.ErrNotFound, name, err)
	}
	defer o.Release()
	info := o.Info()
	entry := keyEntry(caller, name, info.Generation)
	if k, ok := d.streams.keys.get(entry); ok {
		return k, nil
	}
	if info.Kind != store.KindKey || info.Shape.WordSize != 8 || info.Shape.Limbs != len(moduli) {
		return nil, fmt.Errorf("%w: object %q is not a key of this ring (%s, %v)", api.ErrInvalid, name, info.Kind, info.Shape)
	}
	raw, err := o.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("device: read key %q: %w", name, err)
	}
	k := make(engine.Limbs, len(raw))
	for l, b := range raw {
		k[l] = make([]uint64, len(b)/8)
		m := moduli[l%len(moduli)]
		for i := range k[l] {
			v := binary.LittleEndian.Uint64(b[8*i:])
			if v >= m {
				return nil, fmt.Errorf("device: key %q: %w: limb %d coefficient %d is %d, not below %d", name, store.ErrCorrupt, l, i, v, m)
			}
			k[l][i] = v
		}
	}
	// A key larger than a caller's share is used uncached.
	if cached, _, err := d.streams.keys.add(caller, entry, k, info.Bytes); err == nil {
		k = cached
	}
	return k, nil
}
