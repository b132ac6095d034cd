package guard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"os"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

func issued(t *testing.T, name string, role certs.Role) *x509.Certificate {
	t.Helper()
	dir := t.TempDir()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	if err := certs.Issue(dir, name, role, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(certs.CertFile(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(raw)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withPeer is a context as gRPC gives a handler on a TLS connection whose
// client presented chain (verified when verified is set).
func withPeer(chain []*x509.Certificate, verified bool) context.Context {
	st := tls.ConnectionState{PeerCertificates: chain}
	if verified {
		st.VerifiedChains = [][]*x509.Certificate{chain}
	}
	return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: st}})
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// call runs the unary interceptor around a handler that reports the
// identity it was given.
func call(t *testing.T, mode Mode, ctx context.Context, method string) (certs.Identity, error) {
	t.Helper()
	var got certs.Identity
	_, err := Unary(mode, quiet, "grpc.health.v1.Health")(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method},
		func(ctx context.Context, _ any) (any, error) {
			got, _ = IdentityFrom(ctx)
			return nil, nil
		})
	return got, err
}

func TestIdentityIsTheVerifiedCertificate(t *testing.T) {
	c := issued(t, "alice", certs.RoleUser)
	id, err := call(t, MutualTLS, withPeer([]*x509.Certificate{c}, true), "/rosemary.device.v1.Device/List")
	if err != nil || id != (certs.Identity{Name: "alice", Role: certs.RoleUser}) {
		t.Fatalf("identity %v, %v", id, err)
	}
}

func TestUnauthenticatedCallersRefused(t *testing.T) {
	c := issued(t, "alice", certs.RoleUser)
	for name, ctx := range map[string]context.Context{
		"no peer":             context.Background(),
		"not TLS":             peer.NewContext(context.Background(), &peer.Peer{}),
		"no certificate":      withPeer(nil, false),
		"unverified (as TLS)": withPeer([]*x509.Certificate{c}, false),
	} {
		if _, err := call(t, MutualTLS, ctx, "/rosemary.device.v1.Device/Get"); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
	}
	// The health service is open.
	if _, err := call(t, MutualTLS, context.Background(), "/grpc.health.v1.Health/Check"); err != nil {
		t.Errorf("health: %v", err)
	}
	// A look-alike service name is not.
	if _, err := call(t, MutualTLS, context.Background(), "/grpc.health.v1.HealthX/Check"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("look-alike: %v", err)
	}
}

func TestPlaintextCallersShareOneIdentity(t *testing.T) {
	id, err := call(t, PlaintextLoopback, context.Background(), "/rosemary.device.v1.Device/List")
	if err != nil || id != Plaintext {
		t.Fatalf("%v, %v", id, err)
	}
}

func TestPanicBecomesInternal(t *testing.T) {
	_, err := Unary(PlaintextLoopback, quiet)(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"},
		func(context.Context, any) (any, error) {
			var s []int
			return s[1], nil
		})
	if status.Code(err) != codes.Internal {
		t.Fatalf("a panicking handler: %v, want Internal", err)
	}
}
