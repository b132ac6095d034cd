package api

import (
	"context"
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// ServiceName is the gRPC service of the device (devicepb/device.proto).
const ServiceName = "rosemary.device.v1.Device"

// NewServer returns d behind the generated DeviceServer interface: each
// RPC converts (and so validates) its request, calls d and converts the
// reply. A request the conversion refuses fails with an error wrapping
// ErrInvalid; d's errors pass through unchanged (the gRPC server maps
// them to status codes).
func NewServer(d Device) devicepb.DeviceServer { return &server{d: d} }

type server struct {
	devicepb.UnimplementedDeviceServer
	d Device
}

// handle converts a request, calls the device and converts its reply.
func handle[P, Q, R, S any](ctx context.Context, method string, in P, from func(P) (Q, error),
	call func(context.Context, Q) (R, error), to func(R) S) (S, error) {
	var zero S
	req, err := from(in)
	if err != nil {
		return zero, fmt.Errorf("device: %s: malformed request: %w", method, err)
	}
	resp, err := call(ctx, req)
	if err != nil {
		return zero, err
	}
	return to(resp), nil
}

func (s *server) Config(ctx context.Context, in *devicepb.ConfigRequest) (*devicepb.ConfigResponse, error) {
	return handle(ctx, "Config", in, same, s.d.Config, func(r *devicepb.ConfigResponse) *devicepb.ConfigResponse { return r })
}

func (s *server) ProgSet(ctx context.Context, in *devicepb.ProgSetRequest) (*devicepb.ProgSetResponse, error) {
	return handle(ctx, "ProgSet", in, same, s.d.ProgSet, func(r *devicepb.ProgSetResponse) *devicepb.ProgSetResponse { return r })
}

func (s *server) Put(ctx context.Context, in *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	return handle(ctx, "Put", in, same, s.d.Put, func(r *devicepb.PutResponse) *devicepb.PutResponse { return r })
}

func (s *server) Get(ctx context.Context, in *devicepb.GetRequest) (*devicepb.GetResponse, error) {
	return handle(ctx, "Get", in, same, s.d.Get, func(r *devicepb.GetResponse) *devicepb.GetResponse { return r })
}

func (s *server) Delete(ctx context.Context, in *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error) {
	return handle(ctx, "Delete", in, same, s.d.Delete, func(r *devicepb.DeleteResponse) *devicepb.DeleteResponse { return r })
}

func (s *server) List(ctx context.Context, in *devicepb.ListRequest) (*devicepb.ListResponse, error) {
	return handle(ctx, "List", in, same, s.d.List, func(r *devicepb.ListResponse) *devicepb.ListResponse { return r })
}

func (s *server) Grant(ctx context.Context, in *devicepb.GrantRequest) (*devicepb.GrantResponse, error) {
	return handle(ctx, "Grant", in, same, s.d.Grant, func(r *devicepb.GrantResponse) *devicepb.GrantResponse { return r })
}

func (s *server) CopyFrom(ctx context.Context, in *devicepb.CopyFromRequest) (*devicepb.CopyFromResponse, error) {
	return handle(ctx, "CopyFrom", in, same, s.d.CopyFrom, func(r *devicepb.CopyFromResponse) *devicepb.CopyFromResponse { return r })
}

func (s *server) Send(ctx context.Context, in *devicepb.SendRequest) (*devicepb.SendResponse, error) {
	return handle(ctx, "Send", in, same, s.d.Send, func(r *devicepb.SendResponse) *devicepb.SendResponse { return r })
}

func (s *server) Recv(ctx context.Context, in *devicepb.RecvRequest) (*devicepb.RecvResponse, error) {
	return handle(ctx, "Recv", in, same, s.d.Recv, func(r *devicepb.RecvResponse) *devicepb.RecvResponse { return r })
}

func (s *server) Release(ctx context.Context, in *devicepb.ReleaseRequest) (*devicepb.ReleaseResponse, error) {
	return handle(ctx, "Release", in, same, s.d.Release, func(r *devicepb.ReleaseResponse) *devicepb.ReleaseResponse { return r })
}

func (s *server) Stats(ctx context.Context, in *devicepb.StatsRequest) (*devicepb.StatsResponse, error) {
	return handle(ctx, "Stats", in, same, s.d.Stats, func(r *devicepb.StatsResponse) *devicepb.StatsResponse { return r })
}

func (s *server) SetStream(ctx context.Context, in *devicepb.SetStreamRequest) (*devicepb.SetStreamResponse, error) {
	return handle(ctx, "SetStream", in, same, s.d.SetStream, func(r *devicepb.SetStreamResponse) *devicepb.SetStreamResponse { return r })
}

func (s *server) RunStream(ctx context.Context, in *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	return handle(ctx, "RunStream", in, same, s.d.RunStream, func(r *devicepb.RunStreamResponse) *devicepb.RunStreamResponse { return r })
}

func (s *server) QueryLWE(ctx context.Context, in *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	return handle(ctx, "QueryLWE", in, same, s.d.QueryLWE, func(r *devicepb.LWEQueryResponse) *devicepb.LWEQueryResponse { return r })
}

// same passes a message the device takes as it is (its checks are the
// device's own, for in-process callers too).
func same[M any](m M) (M, error) { return m, nil }
