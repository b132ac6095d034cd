package client_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// tlsUsers serves a device over TLS and returns a client for each named
// user, each with its own key set.
func tlsUsers(t *testing.T, users ...string) map[string]*client.Client {
	t.Helper()
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	if err := certs.Init(pki); err != nil {
		t.Fatal(err)
	}
	if err := certs.Issue(pki, "dev0", certs.RoleDevice, nil); err != nil {
		t.Fatal(err)
	}
	srv, err := certs.ServerConfig(certs.InDir(pki, "dev0"), true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "store"), layout.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- device.Serve(ctx, d, lis, device.WithTLS(srv)) }()
	t.Cleanup(func() { cancel(); <-done })
	out := map[string]*client.Client{}
	for _, u := range users {
		if err := certs.Issue(pki, u, certs.RoleUser, nil); err != nil {
			t.Fatal(err)
		}
		cfg, err := certs.ClientConfig(certs.InDir(pki, u))
		if err != nil {
			t.Fatal(err)
		}
		keys, err := client.NewKeys(filepath.Join(dir, "keys-"+u))
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Open(context.Background(), lis.Addr().String(), keys, remote.WithTLS(cfg))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out[u] = c.WithPrograms(programs.New())
	}
	return out
}

// trust has reader accept the grants owner signs (its owner.pub, handed
// over out of band).
func trust(t *testing.T, reader, owner *client.Client) {
	t.Helper()
	if err := reader.Keys().TrustOwner("owner", owner.Keys().OwnerPublicKey()); err != nil {
		t.Fatal(err)
	}
}

// TestGrantLetsAReaderQueryOnly: alice grants bob the reader role with
// bob's public member key; bob's Get returns alice's record byte for byte
// (the database's key reached him sealed to his key), but he may not
// load, drop or grant; after a revoke his queries are refused.
func TestGrantLetsAReaderQueryOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := tlsUsers(t, "alice", "bob", "carol")
	alice, bob, carol := cs["alice"], cs["bob"], cs["carol"]
	const size, n = 48, 300
	data := secretRecords(n, size)
	if _, err := alice.CreatePIR(ctx, "acct", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Get(ctx, "acct", 7); err == nil || !strings.Contains(err.Error(), "PermissionDenied") {
		t.Fatalf("bob before the grant: %v, want PermissionDenied", err)
	}
	if err := bob.Grant(ctx, "acct", "bob", client.RoleOwner, bob.Keys().MemberPublicKey()); err == nil {
		t.Fatal("bob granted himself alice's database")
	}
	trust(t, bob, alice)
	if err := alice.Grant(ctx, "acct", "bob", client.RoleReader, bob.Keys().MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 7, n - 1} {
		got, err := bob.Get(ctx, "acct", i)
		if err != nil || !bytes.Equal(got, data[i*size:(i+1)*size]) {
			t.Fatalf("bob's read of record %d: %q, %v", i, got, err)
		}
	}
	for name, call := range map[string]func() error{
		"load": func() error {
			_, err := bob.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize})
			return err
		},
		"drop": func() error { return bob.Drop(ctx, "acct") },
		"grant": func() error {
			return bob.Grant(ctx, "acct", "carol", client.RoleReader, carol.Keys().MemberPublicKey())
		},
	} {
		// The device refuses, or the client first (a reader's key set
		// makes no generation of another's database).
		if err := call(); err == nil || !strings.Contains(err.Error(), "PermissionDenied") && !errors.Is(err, client.ErrNotKeyOwner) {
			t.Errorf("reader's %s: %v, want PermissionDenied or ErrNotKeyOwner", name, err)
		}
	}
	// carol, granted nothing, is refused.
	if _, err := carol.Get(ctx, "acct", 7); err == nil {
		t.Fatal("carol read a record without a grant")
	}
	if err := alice.Revoke(ctx, "acct", "bob"); err != nil {
		t.Fatal(err)
	}
	// bob's client has the session cached; the device refuses it anyway.
	if _, err := bob.Get(ctx, "acct", 7); err == nil || !strings.Contains(err.Error(), "PermissionDenied") {
		t.Fatalf("bob after the revoke: %v, want PermissionDenied", err)
	}
	if got, err := alice.Get(ctx, "acct", 7); err != nil || !bytes.Equal(got, data[7*size:8*size]) {
		t.Fatalf("alice after the revoke: %q, %v", got, err)
	}
}
