package device

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// InProcess starts a device over st behind a gRPC server on an in-memory
// listener and returns a remote client of it: the same code path as a
// daemon, without a socket. Closing the client stops the server.
func InProcess(st *store.Store, lim Limits) (*remote.Client, *Device, error) {
	d, err := New(st, lim)
	if err != nil {
		return nil, nil, err
	}
	lis := bufconn.Listen(4 << 20)
	srv := NewGRPCServer(d)
	go func() { _ = srv.Serve(lis) }()
	c, err := remote.Dial("passthrough:///bufconn", remote.WithOnClose(srv.Stop), remote.WithInMemory(),
		remote.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return lis.DialContext(ctx)
		})))
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	return c, d, nil
}
