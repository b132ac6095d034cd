package api

import (
	"context"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// PayloadCounter is a gRPC stats.Handler, for a server or a client,
// counting the payload bytes of the device service's messages:
// stats.InPayload.Length and OutPayload.Length, the protobuf encoding of
// each message (its proto.Size), without gRPC's 5-byte message header and
// HTTP/2 framing. Health and reflection RPCs are not counted.
type PayloadCounter struct{ in, out atomic.Int64 }

// Received is the payload bytes of the messages received so far.
func (w *PayloadCounter) Received() int64 { return w.in.Load() }

// Sent is the payload bytes of the messages sent so far.
func (w *PayloadCounter) Sent() int64 { return w.out.Load() }

type countKey struct{}

func (w *PayloadCounter) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if strings.HasPrefix(info.FullMethodName, "/"+ServiceName+"/") {
		return context.WithValue(ctx, countKey{}, true)
	}
	return ctx
}

func (w *PayloadCounter) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if ctx.Value(countKey{}) == nil {
		return
	}
	wc, _ := ctx.Value(wireCountKey{}).(*WireCount)
	switch p := s.(type) {
	case *stats.InPayload:
		w.in.Add(int64(p.Length))
		if wc != nil {
			wc.received.Add(int64(p.WireLength))
		}
	case *stats.OutPayload:
		w.out.Add(int64(p.Length))
		if wc != nil {
			wc.sent.Add(int64(p.WireLength))
		}
	case *stats.Begin:
		if wc != nil {
			wc.rpcs.Add(1)
		}
	}
}

// WireCount counts what the device RPCs made under one context moved on
// the connection (WithWireCount): each message's bytes as gRPC sent them,
// its 5-byte header included (TLS records and HTTP/2 frames add a few
// bytes per frame beyond this). A connection carries many callers' RPCs
// at once, so a count per context, not a difference of the connection's
// totals, is what one query cost.
type WireCount struct{ sent, received, rpcs atomic.Int64 }

type wireCountKey struct{}

// WithWireCount returns ctx whose device RPCs (through a client with a
// PayloadCounter, as device/remote's) add their bytes to w.
func WithWireCount(ctx context.Context, w *WireCount) context.Context {
	return context.WithValue(ctx, wireCountKey{}, w)
}

// Sent is the bytes sent so far (client to device, for a client).
func (w *WireCount) Sent() int64 { return w.sent.Load() }

// Received is the bytes received so far.
func (w *WireCount) Received() int64 { return w.received.Load() }

// Measured reports whether any RPC was counted: false when the calls did
// not go through a gRPC connection (an in-process device).
func (w *WireCount) Measured() bool { return w.rpcs.Load() > 0 }

func (*PayloadCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*PayloadCounter) HandleConn(context.Context, stats.ConnStats)                       {}
