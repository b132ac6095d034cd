package cluster_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/cluster/local"
	"github.com/rosemary-fhe/rosemary/device/certs"
)

// A device that starts while etcd is away waits for it and registers once
// it serves; one whose certificate etcd refuses is told so at once.
func TestJoinWaitsForEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := l.Addr().String()
	l.Close() // nothing serves there yet
	e := cluster.Etcd{Endpoints: []string{endpoint}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type joined struct {
		leave func()
		err   error
	}
	done := make(chan joined, 1)
	retries := make(chan error, 100)
	go func() {
		leave, err := cluster.JoinRetrying(ctx, e, "d0", "127.0.0.1:1", "", 2, 500*time.Millisecond, func(err error) {
			select {
			case retries <- err:
			default:
			}
		})
		done <- joined{leave, err}
	}()
	select {
	case err := <-retries:
		if !errors.Is(err, cluster.ErrEtcd) {
			t.Fatalf("a failed join: %v, want ErrEtcd", err)
		}
	case j := <-done:
		t.Fatalf("joined an etcd that is not there: %v", j.err)
	}
	srv, err := local.StartEtcd(t.TempDir(), endpoint, certs.Files{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	j := <-done
	if j.err != nil {
		t.Fatalf("join once etcd serves: %v", j.err)
	}
	defer j.leave()
	cli, err := cluster.Connect(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ds, err := cluster.Devices(ctx, cli)
	if err != nil || len(ds) != 1 || ds[0].ID != "d0" {
		t.Fatalf("registered devices %+v, %v; want d0", ds, err)
	}

	// Alice's certificate may not register a device: refused, not retried.
	te := startEtcd(t)
	start := time.Now()
	_, err = cluster.JoinRetrying(ctx, te.as(t, "alice"), "d0", "127.0.0.1:1", filepath.Join(t.TempDir()), 2, time.Second, func(err error) {
		t.Errorf("a refused join retried: %v", err)
	})
	if !errors.Is(err, cluster.ErrDenied) {
		t.Fatalf("a user registering a device: %v (after %v), want ErrDenied", err, time.Since(start))
	}
}
