package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// NewClient returns the Device served over cc: each method converts its
// request to the wire, calls the RPC and converts (and checks) the reply.
func NewClient(cc grpc.ClientConnInterface) Device { return &client{rpc: devicepb.NewDeviceClient(cc)} }

type client struct{ rpc devicepb.DeviceClient }

// call runs one RPC and converts its reply. A call the device refuses as
// busy is asked again (RetryBusy).
func call[Q, P, R any](ctx context.Context, method string, rpc func(context.Context, Q, ...grpc.CallOption) (P, error), req Q,
	conv func(P) (R, error)) (R, error) {
	var zero R
	var resp P
	err := RetryBusy(ctx, func() error {
		var err error
		resp, err = rpc(ctx, req)
		return err
	})
	if err != nil {
		// The error table's sentinel, so errors.Is answers as for a device
		// in process.
		return zero, fmt.Errorf("device: %s: %w", method, FromStatus(err))
	}
	r, err := conv(resp)
	if err != nil {
		return zero, fmt.Errorf("device: %s: malformed reply: %w", method, err)
	}
	return r, nil
}

func (c *client) Config(ctx context.Context, req *devicepb.ConfigRequest) (*devicepb.ConfigResponse, error) {
	return call(ctx, "Config", c.rpc.Config, req, same)
}

func (c *client) ProgSet(ctx context.Context, req *devicepb.ProgSetRequest) (*devicepb.ProgSetResponse, error) {
	return call(ctx, "ProgSet", c.rpc.ProgSet, req, same)
}

func (c *client) Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	return call(ctx, "Put", c.rpc.Put, req, same)
}

func (c *client) Get(ctx context.Context, req *devicepb.GetRequest) (*devicepb.GetResponse, error) {
	return call(ctx, "Get", c.rpc.Get, req, same)
}

func (c *client) Delete(ctx context.Context, req *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error) {
	return call(ctx, "Delete", c.rpc.Delete, req, same)
}

func (c *client) List(ctx context.Context, req *devicepb.ListRequest) (*devicepb.ListResponse, error) {
	return call(ctx, "List", c.rpc.List, req, same)
}

func (c *client) Grant(ctx context.Context, req *devicepb.GrantRequest) (*devicepb.GrantResponse, error) {
	return call(ctx, "Grant", c.rpc.Grant, req, same)
}

func (c *client) CopyFrom(ctx context.Context, req *devicepb.CopyFromRequest) (*devicepb.CopyFromResponse, error) {
	return call(ctx, "CopyFrom", c.rpc.CopyFrom, req, same)
}

func (c *client) Send(ctx context.Context, req *devicepb.SendRequest) (*devicepb.SendResponse, error) {
	return call(ctx, "Send", c.rpc.Send, req, same)
}

// Recv's reply is checked as a request's limbs are: the device sent it.
func (c *client) Recv(ctx context.Context, req *devicepb.RecvRequest) (*devicepb.RecvResponse, error) {
	return call(ctx, "Recv", c.rpc.Recv, req, func(m *devicepb.RecvResponse) (*devicepb.RecvResponse, error) {
		_, err := checkLimbs("result", m.GetData())
		return m, err
	})
}

func (c *client) Release(ctx context.Context, req *devicepb.ReleaseRequest) (*devicepb.ReleaseResponse, error) {
	return call(ctx, "Release", c.rpc.Release, req, same)
}

func (c *client) Stats(ctx context.Context, req *devicepb.StatsRequest) (*devicepb.StatsResponse, error) {
	return call(ctx, "Stats", c.rpc.Stats, req, same)
}

func (c *client) SetStream(ctx context.Context, req *devicepb.SetStreamRequest) (*devicepb.SetStreamResponse, error) {
	return call(ctx, "SetStream", c.rpc.SetStream, req, same)
}

// RunStream's reply is checked: its outputs' limbs, its stages' count.
func (c *client) RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	return call(ctx, "RunStream", c.rpc.RunStream, req, func(m *devicepb.RunStreamResponse) (*devicepb.RunStreamResponse, error) {
		if len(m.GetOutputs()) > MaxBindings*64 {
			return nil, fmt.Errorf("%w: output: %d nodes", ErrInvalid, len(m.GetOutputs()))
		}
		for _, v := range m.GetOutputs() {
			if n := len(v.GetInstances()); n > MaxStreamInstances {
				return nil, fmt.Errorf("%w: output node %d has %d instances", ErrInvalid, v.GetNode(), n)
			}
			for k, in := range v.GetInstances() {
				if _, err := checkLimbs(fmt.Sprintf("output node %d instance %d", v.GetNode(), k), in.GetData()); err != nil {
					return nil, err
				}
			}
		}
		return m, CheckCoreUses(m.GetCores())
	})
}

func (c *client) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	return call(ctx, "QueryLWE", c.rpc.QueryLWE, req, same)
}

// Pauses between the tries of a call refused as busy, and how long the
// tries go on at most.
const (
	busyFirstWait = 2 * time.Millisecond
	busyMaxWait   = 200 * time.Millisecond
	busyGiveUp    = 2 * time.Minute
)

// RetryBusy runs f, and again after a growing pause while it fails with
// ErrBusy (a status the device mapped to it, too): the device refused the
// call before running any of it — the caller's bulk calls or its run
// queue were full — so asking again later is safe for every call. It
// gives up when ctx ends or after busyGiveUp, returning the last error.
// A full memory or disk is not busy: retrying would not help, and is not
// done.
func RetryBusy(ctx context.Context, f func() error) error {
	wait, start := busyFirstWait, time.Now()
	for {
		err := f()
		if err == nil || !errors.Is(FromStatus(err), ErrBusy) || time.Since(start) > busyGiveUp {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, busyMaxWait)
	}
}
