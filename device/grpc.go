package device

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/rosemary-fhe/rosemary/store"
)

func init() { encoding.RegisterCodec(&codec{}) }

// ServiceName is the gRPC service of the device.
const ServiceName = "rosemary.device.v1.Device"

// unary builds a method handler: decode the request (a decode failure is
// InvalidArgument), call the device, map its error to a status.
func unary[Req any, Resp any, PReq interface {
	*Req
	message
}](name string, call func(*Device, context.Context, PReq) (Resp, error)) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
		in := PReq(new(Req))
		err := dec(in)
		if err == nil && srv.(*Device).wire != nil {
			err = srv.(*Device).wire.decodeErr(in)
		}
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "device: %s: malformed request: %v", name, err)
		}
		h := func(ctx context.Context, req any) (any, error) {
			resp, err := call(srv.(*Device), ctx, req.(PReq))
			if err != nil {
				return nil, toStatus(err)
			}
			return resp, nil
		}
		if icpt == nil {
			return h(ctx, in)
		}
		return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + ServiceName + "/" + name}, h)
	}}
}

func toStatus(err error) error {
	c := codes.Internal
	switch {
	case errors.Is(err, ErrInvalid):
		c = codes.InvalidArgument
	case errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotFound):
		c = codes.NotFound
	case errors.Is(err, ErrExhausted):
		c = codes.ResourceExhausted
	case errors.Is(err, store.ErrISPMode):
		c = codes.FailedPrecondition
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		c = codes.Canceled
	}
	return status.Error(c, err.Error())
}

// serviceDesc is the hand-written descriptor of the device service (there
// is no .proto: messages use the device codec).
var serviceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		unary("Config", (*Device).Config),
		unary("ProgSet", (*Device).ProgSet),
		unary("Put", (*Device).Put),
		unary("Get", (*Device).Get),
		unary("Delete", (*Device).Delete),
		unary("Send", (*Device).Send),
		unary("Recv", (*Device).Recv),
		unary("Release", (*Device).Release),
		unary("Stats", (*Device).Stats),
	},
	Metadata: "rosemary/device",
}

// NewGRPCServer returns a gRPC server exposing d.
func NewGRPCServer(d *Device) *grpc.Server {
	c := &codec{deferErrs: true}
	d.wire = c
	s := grpc.NewServer(grpc.ForceServerCodec(c), grpc.MaxRecvMsgSize(MaxMessageBytes+1024), grpc.MaxSendMsgSize(MaxMessageBytes+1024))
	s.RegisterService(&serviceDesc, d)
	return s
}

// Serve runs the device service on lis until ctx ends.
func Serve(ctx context.Context, d *Device, lis net.Listener) error {
	s := NewGRPCServer(d)
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(lis) }()
	select {
	case <-ctx.Done():
		s.GracefulStop()
		<-errc
		return nil
	case err := <-errc:
		return fmt.Errorf("device: serve: %w", err)
	}
}
