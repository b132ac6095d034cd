package infer

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// A private inference over mutual TLS with the deployment's certificates:
// the server (a server certificate) admits alice (a user's), and her
// private classes agree with the plaintext reference.
func TestInferenceOverMutualTLS(t *testing.T) {
	q, d := fixtures(t)
	dir := t.TempDir()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"mpc": certs.RoleServer, "alice": certs.RoleUser} {
		if err := certs.Issue(dir, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	srvTLS, err := certs.ServerConfig(certs.InDir(dir, "mpc"), true)
	if err != nil {
		t.Fatal(err)
	}
	cliTLS, err := certs.ClientConfig(certs.InDir(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	srv := &transport.SessionServer{TLS: srvTLS, Authorize: certs.Allow([]certs.Role{certs.RoleUser}, nil),
		Logf: func(f string, a ...any) { failed = append(failed, f) }}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeListener(ctx, l, srv, q, 1) }()
	conn, err := transport.DialTLS(ctx, l.Addr().String(), cliTLS)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(conn, Config{Protocol: linear.OptiEncode}, d.Subset(2), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Images != 2 || rep.Agreement != 1 || rep.MaxLogitDiff > rep.LogitErrorBound || rep.PlainAccuracy != 1 {
		t.Errorf("report %+v", rep)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The one log line is the session's summary, not a failure.
	if len(failed) != 1 || !strings.Contains(failed[0], "images in") {
		t.Errorf("server log %q", failed)
	}
}
