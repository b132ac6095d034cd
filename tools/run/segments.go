package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// setStreams turns every device segment of the plan into its stream
// program and sets it on the device once. A segment that cannot stream
// (an operation without a streaming lowering) leaves the session running
// device nodes op by op, with the reason in StreamErr.
func (s *Session) setStreams(ctx context.Context, c api.Device) error {
	streams := map[int]*lower.StreamProgram{}
	names := map[int]string{}
	ring := lower.RingOf(s.rparams)
	var t uint64
	if s.preset.Scheme == fhe.BGV {
		t = s.preset.T
	}
	for i, seg := range s.Plan.Segments {
		if !seg.OnSSD() || !s.Plan.Computes(i) {
			continue
		}
		sp, err := s.Plan.StreamSegment(i, ring, s.preset.Scheme, t)
		if err != nil {
			s.StreamErr = err
			return nil
		}
		name, _, err := setStream(ctx, c, s.Opts.Workload, sp)
		if err != nil {
			return fmt.Errorf("run: segment %d: %w", i, err)
		}
		streams[i], names[i] = sp, name
	}
	s.Streams, s.streamNames = streams, names
	return nil
}

// execSegments is the session's plan in the form the executor runs:
// its segments in order, each device segment with its stream program.
func (s *Session) execSegments() []engine.Segment {
	segs := make([]engine.Segment, len(s.Plan.Segments))
	for i, seg := range s.Plan.Segments {
		segs[i] = engine.Segment{OnDevice: seg.OnSSD(), Nodes: seg.Nodes, Stream: s.Streams[i]}
	}
	return segs
}

// segmentRunner runs a session's device segments on a device.
type segmentRunner struct {
	s   *Session
	dev api.Device
}

// RunSegment implements engine.SegmentRunner.
func (r *segmentRunner) RunSegment(ctx context.Context, seg int, inputs map[int][]engine.Limbs) (map[int][]engine.Limbs, int64, error) {
	sp := r.s.Streams[seg]
	req := &devicepb.RunStreamRequest{Program: r.s.streamNames[seg]}
	for node, vs := range inputs {
		req.Inputs = append(req.Inputs, &devicepb.StreamValues{Node: uint32(node), Instances: api.Instances(vs)})
	}
	keys := map[lower.KeyID]bool{}
	for _, sn := range sp.Nodes {
		if sn.Kind == lower.StreamStored {
			per, ok := r.s.storedPer[sn.Name]
			if !ok {
				return nil, 0, fmt.Errorf("run: stored %q was not uploaded", sn.Name)
			}
			req.Stored = append(req.Stored, &devicepb.StoredBinding{Node: uint32(sn.Node),
				Prefix: fmt.Sprintf("%s/%s/", r.s.Opts.Prefix, sn.Name), PerObject: uint32(per)})
		}
		for _, l := range append([]*lower.Program{sn.Body}, sn.Steps...) {
			if l == nil || l.KeyName() == "" {
				continue
			}
			id, err := lower.ParseKeyID(l.KeyName())
			if err != nil {
				return nil, 0, fmt.Errorf("run: %w", err)
			}
			if keys[id] {
				continue
			}
			obj, ok := r.s.keyObjects[id]
			if !ok {
				return nil, 0, fmt.Errorf("run: no key %s uploaded", id)
			}
			keys[id] = true
			req.Keys = append(req.Keys, &devicepb.KeyBinding{Key: id.String(), Object: obj})
		}
	}
	resp, err := r.dev.RunStream(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	out := map[int][]engine.Limbs{}
	for _, o := range resp.GetOutputs() {
		vals, err := api.DecodeInstances("output", o)
		if err != nil {
			return nil, 0, err
		}
		out[int(o.GetNode())] = vals
	}
	return out, int64(resp.MicroOps), nil
}

// setStream sets a stream program on a device under a name derived from
// its bytes (the same program is set once, whoever sets it), and returns
// the name and the bytes sent.
func setStream(ctx context.Context, dev api.Device, kind string, sp *lower.StreamProgram) (string, int64, error) {
	raw, err := sp.MarshalBinary()
	if err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256(raw)
	name := "stream/" + kind + "/" + hex.EncodeToString(sum[:8])
	if _, err := dev.SetStream(ctx, &devicepb.SetStreamRequest{Name: name, Program: raw}); err != nil {
		return "", 0, fmt.Errorf("run: set stream program: %w", err)
	}
	return name, int64(len(raw)), nil
}
