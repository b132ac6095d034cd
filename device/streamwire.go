package device

import (
	"context"
	"fmt"
	"math"

	pb "github.com/rosemary-fhe/rosemary/device/devicepb"
)

// Wire conversions of the stream RPCs (see convert.go for the rules).

// MaxStreamInstances bounds the instances of one node a stream request or
// reply carries; MaxStreamBindings the stored nodes and the keys it binds.
const (
	MaxStreamInstances = 1 << 16
	MaxStreamBindings  = 1 << 12
)

func valuesFromProto(what string, vs []*pb.StreamValues) ([]StreamValues, error) {
	if len(vs) > MaxBindings*64 {
		return nil, fmt.Errorf("%w: %s: %d nodes", ErrInvalid, what, len(vs))
	}
	out := make([]StreamValues, 0, len(vs))
	var total int64
	for _, v := range vs {
		if len(v.GetInstances()) > MaxStreamInstances {
			return nil, fmt.Errorf("%w: %s: node %d has %d instances (at most %d)", ErrInvalid, what, v.GetNode(), len(v.GetInstances()), MaxStreamInstances)
		}
		sv := StreamValues{Node: int(v.GetNode())}
		for k, in := range v.GetInstances() {
			for _, l := range in.GetData() {
				total += int64(len(l))
			}
			if total > MaxMessageBytes {
				return nil, fmt.Errorf("%w: %s: more than %d bytes", ErrInvalid, what, MaxMessageBytes)
			}
			limbs, err := decodeLimbs(fmt.Sprintf("%s node %d instance %d", what, v.GetNode(), k), in.GetData())
			if err != nil {
				return nil, err
			}
			if limbs == nil {
				return nil, fmt.Errorf("%w: %s: node %d instance %d has no limbs", ErrInvalid, what, v.GetNode(), k)
			}
			sv.Instances = append(sv.Instances, limbs)
		}
		out = append(out, sv)
	}
	return out, nil
}

func valuesToProto(vs []StreamValues) []*pb.StreamValues {
	out := make([]*pb.StreamValues, 0, len(vs))
	for _, v := range vs {
		m := &pb.StreamValues{Node: uint32(v.Node)}
		for _, in := range v.Instances {
			m.Instances = append(m.Instances, &pb.Instance{Data: encodeLimbs(in)})
		}
		out = append(out, m)
	}
	return out
}

func setStreamFromProto(m *pb.SetStreamRequest) (*SetStreamRequest, error) {
	if err := checkNameLen("name", m.GetName()); err != nil {
		return nil, err
	}
	if len(m.GetProgram()) > MaxMessageBytes {
		return nil, fmt.Errorf("%w: stream program of %d bytes", ErrInvalid, len(m.GetProgram()))
	}
	return &SetStreamRequest{Name: m.GetName(), Program: m.GetProgram()}, nil
}

func runStreamFromProto(m *pb.RunStreamRequest) (*RunStreamRequest, error) {
	if err := checkNameLen("program", m.GetProgram()); err != nil {
		return nil, err
	}
	inputs, err := valuesFromProto("input", m.GetInputs())
	if err != nil {
		return nil, err
	}
	if len(m.GetStored()) > MaxStreamBindings || len(m.GetKeys()) > MaxStreamBindings {
		return nil, fmt.Errorf("%w: %d stored and %d key bindings", ErrInvalid, len(m.GetStored()), len(m.GetKeys()))
	}
	r := &RunStreamRequest{Program: m.GetProgram(), Inputs: inputs}
	for _, b := range m.GetStored() {
		if err := checkNameLen("stored prefix", b.GetPrefix()); err != nil {
			return nil, err
		}
		if b.GetRowLength() > 1<<40 {
			return nil, fmt.Errorf("%w: rows of %d instances", ErrInvalid, b.GetRowLength())
		}
		r.Stored = append(r.Stored, StoredBinding{Node: int(b.GetNode()), Prefix: b.GetPrefix(), PerObject: int64(b.GetPerObject()),
			RowLength: int64(b.GetRowLength()), TileRows: int64(b.GetTileRows()), Stride: int64(b.GetStride()), Offset: int64(b.GetOffset())})
	}
	for _, k := range m.GetKeys() {
		if err := checkNameLen("key", k.GetKey()); err != nil {
			return nil, err
		}
		if err := checkNameLen("key object", k.GetObject()); err != nil {
			return nil, err
		}
		r.Keys = append(r.Keys, KeyBinding{Key: k.GetKey(), Object: k.GetObject()})
	}
	return r, nil
}

func runStreamToProto(r *RunStreamRequest) *pb.RunStreamRequest {
	m := &pb.RunStreamRequest{Program: r.Program, Inputs: valuesToProto(r.Inputs)}
	for _, b := range r.Stored {
		m.Stored = append(m.Stored, &pb.StoredBinding{Node: uint32(b.Node), Prefix: b.Prefix, PerObject: uint32(min(b.PerObject, math.MaxUint32)),
			RowLength: uint64(max(b.RowLength, 0)), TileRows: uint32(min(max(b.TileRows, 0), math.MaxUint32)),
			Stride: uint32(min(max(b.Stride, 0), math.MaxUint32)), Offset: uint32(min(max(b.Offset, 0), math.MaxUint32))})
	}
	for _, k := range r.Keys {
		m.Keys = append(m.Keys, &pb.KeyBinding{Key: k.Key, Object: k.Object})
	}
	return m
}

func setStreamRespToProto(r *SetStreamResponse) *pb.SetStreamResponse {
	return &pb.SetStreamResponse{Nodes: r.Nodes}
}

func runStreamRespToProto(r *RunStreamResponse) *pb.RunStreamResponse {
	return &pb.RunStreamResponse{Outputs: valuesToProto(r.Outputs), StoreBytes: r.StoreBytes, Instructions: r.Instructions,
		MicroOps: r.MicroOps, Bodies: r.Bodies, Stored: r.Stored, PeakBytes: r.PeakBytes, Seconds: r.Seconds}
}

func runStreamRespFromProto(m *pb.RunStreamResponse) (*RunStreamResponse, error) {
	outs, err := valuesFromProto("output", m.GetOutputs())
	if err != nil {
		return nil, err
	}
	return &RunStreamResponse{Outputs: outs, StoreBytes: m.GetStoreBytes(), Instructions: m.GetInstructions(),
		MicroOps: m.GetMicroOps(), Bodies: m.GetBodies(), Stored: m.GetStored(), PeakBytes: m.GetPeakBytes(), Seconds: m.GetSeconds()}, nil
}

func (s *server) SetStream(ctx context.Context, in *pb.SetStreamRequest) (*pb.SetStreamResponse, error) {
	return handle(ctx, "SetStream", in, setStreamFromProto, s.d.SetStream, setStreamRespToProto)
}

func (s *server) RunStream(ctx context.Context, in *pb.RunStreamRequest) (*pb.RunStreamResponse, error) {
	return handle(ctx, "RunStream", in, runStreamFromProto, s.d.RunStream, runStreamRespToProto)
}

// SetStream registers a stream program on the device.
func (c *Client) SetStream(ctx context.Context, req *SetStreamRequest) (*SetStreamResponse, error) {
	return callCtx(ctx, c, "SetStream", c.rpc.SetStream, &pb.SetStreamRequest{Name: req.Name, Program: req.Program},
		func(m *pb.SetStreamResponse) (*SetStreamResponse, error) {
			return &SetStreamResponse{Nodes: m.GetNodes()}, nil
		})
}

// RunStream runs a registered stream program; cancelling ctx stops the run
// on the device.
func (c *Client) RunStream(ctx context.Context, req *RunStreamRequest) (*RunStreamResponse, error) {
	return callCtx(ctx, c, "RunStream", c.rpc.RunStream, runStreamToProto(req), runStreamRespFromProto)
}

// PutObject stores an object given as a request (Put with its fields
// spread out), the form runtime.StreamDevice shares with Device.
func (c *Client) PutObject(ctx context.Context, req *PutRequest) (*PutResponse, error) {
	return callCtx(ctx, c, "Put", c.rpc.Put, putToProto(req), func(m *pb.PutResponse) (*PutResponse, error) {
		return &PutResponse{Generation: m.GetGeneration(), Bytes: m.GetBytes()}, nil
	})
}

// PutObject stores an object (in process; the same as Put).
func (d *Device) PutObject(ctx context.Context, req *PutRequest) (*PutResponse, error) {
	return d.Put(ctx, req)
}

// GetObject reads a stored object given as a request (the form
// runtime.StreamDevice shares with Device).
func (c *Client) GetObject(ctx context.Context, req *GetRequest) (*GetResponse, error) {
	return callCtx(ctx, c, "Get", c.rpc.Get, &pb.GetRequest{Name: req.Name}, getRespFromProto)
}

// GetObject reads a stored object (in process; the same as Get).
func (d *Device) GetObject(ctx context.Context, req *GetRequest) (*GetResponse, error) {
	return d.Get(ctx, req)
}
