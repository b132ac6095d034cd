package cluster_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/cluster/local"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// newPKI makes a test cluster's certificates in a fresh directory: a CA,
// etcd's server certificate, the coordinator (admin), devices d0…d5,
// users alice, bob and carol (whom etcd is never told of).
func newPKI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	parties := map[string]certs.Role{"etcd": certs.RoleServer, "coordinator": certs.RoleAdmin,
		"alice": certs.RoleUser, "bob": certs.RoleUser, "carol": certs.RoleUser}
	for _, d := range []string{"d0", "d1", "d2", "d3", "d4", "d5"} {
		parties[d] = certs.RoleDevice
	}
	for name, role := range parties {
		if err := certs.Issue(dir, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// connect is party name's raw etcd connection.
func connect(t *testing.T, e *testEtcd, name string) *clientv3.Client {
	t.Helper()
	cli, err := cluster.Connect(context.Background(), e.as(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// value is what key holds, read by the admin ("" if nothing).
func value(t *testing.T, admin *clientv3.Client, key string) string {
	t.Helper()
	resp, err := admin.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, cluster.ErrDenied) {
		t.Errorf("%s: %v, want ErrDenied", what, err)
	}
}

// Devices may write only their own registry key; users only the maps of
// their own databases; the coordinator everything; a certificate the CA
// signed but etcd does not know, or etcd's own server certificate, nothing.
func TestEtcdRBAC(t *testing.T) {
	ctx := context.Background()
	e := startEtcd(t)
	admin := connect(t, e, "coordinator")

	// d0 registers (the normal flow), d1 tries to take d0's key over.
	leave, err := cluster.Join(ctx, e.as(t, "d0"), "d0", "127.0.0.1:7000", "", 30)
	if err != nil {
		t.Fatalf("d0 registers: %v", err)
	}
	defer leave()
	d0Record := value(t, admin, cluster.DeviceKey("d0"))
	if !strings.Contains(d0Record, `"addr":"127.0.0.1:7000"`) {
		t.Fatalf("d0's registry record: %q", d0Record)
	}
	d1 := connect(t, e, "d1")
	_, err = cluster.Register(ctx, d1, cluster.DeviceInfo{ID: "d0", Addr: "10.6.6.6:7420"}, 30)
	wantDenied(t, "d1 registers as d0", err)
	_, err = d1.Put(ctx, cluster.DeviceKey("d0"), `{"id":"d0","addr":"10.6.6.6:7420"}`)
	wantDenied(t, "d1 puts d0's key", cluster.Denied(err))
	_, err = d1.Delete(ctx, cluster.DeviceKey("d0"))
	wantDenied(t, "d1 deletes d0's key", cluster.Denied(err))
	_, err = d1.Put(ctx, cluster.MapKey("alice", "words"), "{}")
	wantDenied(t, "d1 writes a map", cluster.Denied(err))
	if got := value(t, admin, cluster.DeviceKey("d0")); got != d0Record {
		t.Fatalf("d0's record changed to %q", got)
	}
	// d1 registers as itself and sees the registry (copy sources).
	leave1, err := cluster.Join(ctx, e.as(t, "d1"), "d1", "127.0.0.1:7001", "", 30)
	if err != nil {
		t.Fatalf("d1 registers as itself: %v", err)
	}
	defer leave1()
	if ds, err := cluster.Devices(ctx, d1); err != nil || len(ds) != 2 || ds[0].Addr != "127.0.0.1:7000" {
		t.Fatalf("d1 lists devices: %v %v", ds, err)
	}

	// alice creates a database; the map lands under her prefix.
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	alice, err := cluster.Open(ctx, e.as(t, "alice"), keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	if _, err := alice.CreatePIR(ctx, "words", 64, 2, 1); err != nil {
		t.Fatalf("alice creates her database: %v", err)
	}
	aliceMap := value(t, admin, cluster.MapKey("alice", "words"))
	if !strings.Contains(aliceMap, `"record_size":64`) {
		t.Fatalf("alice's map: %q", aliceMap)
	}
	// A user may not touch the registry.
	ac := alice.Etcd()
	_, err = ac.Put(ctx, cluster.DeviceKey("d0"), `{"id":"d0","addr":"10.6.6.6:7420"}`)
	wantDenied(t, "alice overwrites d0's registry key", cluster.Denied(err))
	_, err = ac.Put(ctx, cluster.DeviceKey("alice"), `{"id":"alice","addr":"10.6.6.6:7420"}`)
	wantDenied(t, "alice registers a device", cluster.Denied(err))
	_, err = cluster.Register(ctx, ac, cluster.DeviceInfo{ID: "evil", Addr: "10.6.6.6:7420"}, 30)
	wantDenied(t, "alice registers via Register", err)

	// bob reads alice's map but may not write or delete it.
	bob, err := cluster.Open(ctx, e.as(t, "bob"), keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if m, err := bob.Info(ctx, "alice/words"); err != nil || m.Owner != "alice" || m.Matrix().RecordSize != 64 {
		t.Fatalf("bob reads alice's map: %+v %v", m, err)
	}
	bc := bob.Etcd()
	_, err = bc.Put(ctx, cluster.MapKey("alice", "words"), "{}")
	wantDenied(t, "bob overwrites alice's map", cluster.Denied(err))
	_, err = bc.Delete(ctx, cluster.MapKey("alice", "words"))
	wantDenied(t, "bob deletes alice's map", cluster.Denied(err))
	_, err = bc.Put(ctx, cluster.MapKey("alicex", "words"), "{}") // a prefix of another's is no loophole
	wantDenied(t, "bob writes under alicex", cluster.Denied(err))
	_, err = bob.Load(ctx, "alice/words", strings.NewReader(""), dataset.FixedSize)
	wantDenied(t, "bob loads alice's database", err)
	if _, err := bob.CreatePIR(ctx, "words", 32, 1, 1); err != nil {
		t.Fatalf("bob creates his own words: %v", err)
	}
	if got := value(t, admin, cluster.MapKey("alice", "words")); got != aliceMap {
		t.Fatalf("alice's map changed to %q", got)
	}
	if m, err := alice.Info(ctx, "words"); err != nil || m.Matrix().RecordSize != 64 {
		t.Fatalf("alice's words after bob made his: %+v %v", m, err)
	}

	// The coordinator may write anyone's map (repair, rebalance).
	if _, err := admin.Put(ctx, cluster.MapKey("alice", "words"), aliceMap); err != nil {
		t.Fatalf("the coordinator rewrites alice's map: %v", err)
	}
	st, err := cluster.ReadStatus(ctx, admin)
	if err != nil || len(st.Databases) != 2 || len(st.Devices) != 2 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if _, err := cluster.ReadStatus(ctx, bc); err != nil {
		t.Fatalf("a user reads the status: %v", err)
	}

	// carol's certificate is the CA's, but etcd was never told of her;
	// etcd's own server certificate is no client's.
	for _, name := range []string{"carol", "etcd"} {
		cli := connect(t, e, name)
		_, err := cli.Get(ctx, cluster.MapKey("alice", "words"))
		wantDenied(t, name+" reads a map", cluster.Denied(err))
		_, err = cli.Put(ctx, cluster.MapKey(name, "x"), "{}")
		wantDenied(t, name+" writes under its own prefix", cluster.Denied(err))
	}
	// A device may not write maps, even under its own name.
	_, err = d1.Put(ctx, cluster.MapKey("d1", "x"), "{}")
	wantDenied(t, "d1 writes a map under its name", cluster.Denied(err))
	// Users, devices and the CA-signed stranger may not manage users.
	for _, name := range []string{"alice", "d0", "carol"} {
		cli := connect(t, e, name)
		err := cluster.AddUser(ctx, cli, certs.Identity{Name: "mallory", Role: certs.RoleAdmin})
		wantDenied(t, name+" adds an admin", err)
	}
}

// Connections etcd refuses: no client certificate, a certificate of
// another CA (even under a known name), TLS below 1.3, plaintext.
func TestEtcdRefusesUnauthenticated(t *testing.T) {
	e := startEtcd(t)
	admin := connect(t, e, "coordinator")
	caPEM, err := os.ReadFile(filepath.Join(e.pki, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)

	// Another CA's certificates for the names etcd knows.
	other := t.TempDir()
	if err := certs.Init(other); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"coordinator": certs.RoleAdmin, "d0": certs.RoleDevice} {
		if err := certs.Issue(other, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	forged := func(name string) *tls.Config {
		cfg, err := certs.ClientConfig(certs.InDir(other, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg.RootCAs = roots // it trusts etcd; etcd must not trust it
		return cfg
	}

	// At the TLS layer: the handshake's outcome as the server sends it.
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		want string
	}{
		{"no client certificate", &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}, "certificate required"},
		{"another CA's coordinator", forged("coordinator"), "unknown certificate authority"},
		{"TLS 1.2", &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS12}, "protocol version"},
	} {
		conn, err := tls.Dial("tcp", e.endpoint, tc.cfg)
		if err == nil {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}

	// Through etcd's client: nothing gets written.
	for _, tc := range []struct {
		name string
		e    cluster.Etcd
	}{
		{"no client certificate", cluster.Etcd{Endpoints: []string{e.endpoint}, TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}}},
		{"another CA's coordinator", cluster.Etcd{Endpoints: []string{e.endpoint}, TLS: forged("coordinator")}},
		{"another CA's d0", cluster.Etcd{Endpoints: []string{e.endpoint}, TLS: forged("d0")}},
		{"plaintext", cluster.Etcd{Endpoints: []string{e.endpoint}}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		cli, err := cluster.Connect(ctx, tc.e)
		if err == nil {
			_, err = cli.Put(ctx, cluster.DeviceKey("d0"), "forged")
			cli.Close()
		}
		cancel()
		if err == nil {
			t.Errorf("%s: a put went through", tc.name)
		}
	}
	if got := value(t, admin, cluster.DeviceKey("d0")); got != "" {
		t.Fatalf("d0's key holds %q after the refused writes", got)
	}

	// Plaintext only to loopback, on either side.
	if _, err := cluster.Connect(context.Background(), cluster.Etcd{Endpoints: []string{"10.0.0.1:2379"}}); !errors.Is(err, certs.ErrNotLoopback) {
		t.Errorf("plaintext to 10.0.0.1: %v, want ErrNotLoopback", err)
	}
	if _, err := local.StartEtcd(t.TempDir(), "0.0.0.0:0", certs.Files{}); !errors.Is(err, certs.ErrNotLoopback) {
		t.Errorf("a plaintext etcd on every interface: %v, want ErrNotLoopback", err)
	}
}

// SetupAuth needs an admin; a second run, and AddUser again, change
// nothing.
func TestEtcdSetupIsIdempotent(t *testing.T) {
	ctx := context.Background()
	e := startEtcd(t) // auth on already
	admin := connect(t, e, "coordinator")
	if err := cluster.SetupAuth(ctx, admin, certs.Identity{Name: "coordinator", Role: certs.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.AddUser(ctx, admin, certs.Identity{Name: "alice", Role: certs.RoleUser}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.AddUser(ctx, admin, certs.Identity{Name: "etcd", Role: certs.RoleServer}); err == nil {
		t.Error("a server certificate became an etcd user")
	}
	if err := cluster.AddUser(ctx, admin, certs.Identity{Name: "root", Role: certs.RoleUser}); err == nil {
		t.Error("root became a plain user")
	}
	alice := connect(t, e, "alice")
	if _, err := alice.Put(ctx, cluster.MapKey("alice", "x"), "{}"); err != nil {
		t.Fatalf("alice after AddUser twice: %v", err)
	}

	// On a fresh etcd without auth, a user cannot turn it on.
	pki := e.pki
	fresh, err := local.StartEtcd(t.TempDir(), "127.0.0.1:0", certs.InDir(pki, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	fe := &testEtcd{endpoint: fresh.Clients[0].Addr().String(), pki: pki}
	if err := cluster.SetupAuth(ctx, connect(t, fe, "alice"), certs.Identity{Name: "alice", Role: certs.RoleUser}); err == nil {
		t.Error("a user turned etcd's auth on")
	}
}
