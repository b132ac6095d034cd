package device

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// failing is a device whose Config fails with the error it holds.
type failing struct {
	api.Device
	err error
}

func (f *failing) Config(context.Context, *devicepb.ConfigRequest) (*devicepb.ConfigResponse, error) {
	return nil, f.err
}

// Every error of the table survives a real gRPC server and client as the
// same sentinel (errors.Is), with its code; the three ResourceExhausted
// errors stay apart by their reason.
func TestErrorTableRoundTrip(t *testing.T) {
	dev := &failing{}
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		return resp, asStatus(err)
	}))
	devicepb.RegisterDeviceServer(srv, api.NewServer(dev))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient("passthrough:///bufconn", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	c := api.NewClient(cc)
	all := []error{api.ErrInvalid, api.ErrNotFound, api.ErrExhausted, api.ErrBusy, api.ErrDiskFull, api.ErrUnauthenticated,
		api.ErrPermissionDenied, api.ErrUnavailable, api.ErrStale, api.ErrChecksum, api.ErrInUse}
	for _, tc := range []struct {
		name string
		err  error // what the device fails with
		want error // the sentinel the client sees
		code codes.Code
	}{
		{"invalid", fmt.Errorf("device: put: %w: bad", api.ErrInvalid), api.ErrInvalid, codes.InvalidArgument},
		{"not found", fmt.Errorf("device: get: %w", api.ErrNotFound), api.ErrNotFound, codes.NotFound},
		{"store not found", fmt.Errorf("x: %w", store.ErrNotFound), api.ErrNotFound, codes.NotFound},
		{"memory full", fmt.Errorf("device: %w: 1024 programs", api.ErrExhausted), api.ErrExhausted, codes.ResourceExhausted},
		{"busy", fmt.Errorf("device: runstream: %w", admit.ErrBusy), api.ErrBusy, codes.ResourceExhausted},
		{"disk full", fmt.Errorf("device: put: %w: %w", api.ErrDiskFull, syscall.ENOSPC), api.ErrDiskFull, codes.ResourceExhausted},
		// A full disk wrapped as invalid by the path that met it is a full disk.
		{"ENOSPC under invalid", fmt.Errorf("%w: %w", api.ErrInvalid, syscall.ENOSPC), api.ErrDiskFull, codes.ResourceExhausted},
		{"unauthenticated", api.ErrUnauthenticated, api.ErrUnauthenticated, codes.Unauthenticated},
		{"denied", fmt.Errorf("%w: bob", api.ErrPermissionDenied), api.ErrPermissionDenied, codes.PermissionDenied},
		{"unavailable", fmt.Errorf("copy: %w", api.ErrUnavailable), api.ErrUnavailable, codes.Unavailable},
		{"stale", fmt.Errorf("put: %w", api.ErrStale), api.ErrStale, codes.Aborted},
		{"checksum", fmt.Errorf("copy: %w", api.ErrChecksum), api.ErrChecksum, codes.DataLoss},
		{"corrupt", fmt.Errorf("get: %w", store.ErrCorrupt), api.ErrChecksum, codes.DataLoss},
		{"isp mode", fmt.Errorf("put: %w", store.ErrISPMode), api.ErrInUse, codes.FailedPrecondition},
		{"deadline", fmt.Errorf("run: %w", context.DeadlineExceeded), context.DeadlineExceeded, codes.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev.err = tc.err
			_, err := c.Config(context.Background(), &devicepb.ConfigRequest{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want errors.Is %v", err, tc.want)
			}
			if got := status.Code(err); got != tc.code {
				t.Fatalf("code %v, want %v (%v)", got, tc.code, err)
			}
			for _, other := range all {
				if other != tc.want && errors.Is(err, other) {
					t.Fatalf("%v is also %v", err, other)
				}
			}
			// The same sentinel in process: what code written against a
			// Device tests holds either way.
			if !errors.Is(tc.err, tc.want) && errorKind(tc.err) != tc.want {
				t.Fatalf("in process %v does not map to %v", tc.err, tc.want)
			}
		})
	}
	// An error outside the table is Internal and no sentinel.
	dev.err = errors.New("something broke")
	_, err = c.Config(context.Background(), &devicepb.ConfigRequest{})
	if status.Code(err) != codes.Internal || api.Sentinel(err) != nil {
		t.Fatalf("an unknown error: %v (code %v)", err, status.Code(err))
	}
}
