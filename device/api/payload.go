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
	switch p := s.(type) {
	case *stats.InPayload:
		w.in.Add(int64(p.Length))
	case *stats.OutPayload:
		w.out.Add(int64(p.Length))
	}
}

func (*PayloadCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*PayloadCounter) HandleConn(context.Context, stats.ConnStats)                       {}
