package infer

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Private inference over mutual TLS with the deployment's certificates:
// the server (a server certificate) admits alice (a user's) in two
// sessions at once, and her private classes agree with the plaintext
// reference.
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
	var mu sync.Mutex
	var logged []string
	srv := &transport.SessionServer{TLS: srvTLS, Authorize: certs.Allow([]certs.Role{certs.RoleUser}, nil), MaxSessions: 2,
		Logf: func(f string, a ...any) { mu.Lock(); logged = append(logged, fmt.Sprintf(f, a...)); mu.Unlock() }}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeListener(ctx, l, srv, q, 2) }()
	// Two clients at once: the sessions share the server's model.
	reports := make(chan *Report, 2)
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			conn, err := transport.DialTLS(ctx, l.Addr().String(), cliTLS)
			if err != nil {
				errs <- err
				return
			}
			rep, err := Evaluate(conn, Config{Protocol: linear.OptiEncode}, model.Dataset{Images: d.Images[i : i+1], Labels: d.Labels[i : i+1]}, q, nil)
			if err != nil {
				errs <- err
				return
			}
			reports <- rep
		}()
	}
	for range 2 {
		select {
		case err := <-errs:
			t.Fatal(err)
		case rep := <-reports:
			if rep.Images != 1 || rep.Agreement != 1 || rep.MaxLogitDiff > rep.LogitErrorBound || rep.PlainAccuracy != 1 {
				t.Errorf("report %+v", rep)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The log holds the two sessions' summaries, no failure.
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 || !strings.Contains(logged[0], "images in") || !strings.Contains(logged[1], "images in") {
		t.Errorf("server log %q", logged)
	}
}
