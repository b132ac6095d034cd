package device

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"google.golang.org/grpc/codes"
)

// tlsDevice serves a device over TLS with the certificates of a fresh
// deployment in dir (a device dev0; users alice and bob; an admin ops) and
// returns its address.
func tlsDevice(t *testing.T, dir string, clientCertAuth bool) string {
	t.Helper()
	addr, _ := tlsDeviceWith(t, dir, clientCertAuth, DefaultLimits())
	return addr
}

// tlsDeviceWith is tlsDevice with the device's limits, returning the
// device too.
func tlsDeviceWith(t *testing.T, dir string, clientCertAuth bool, lim Limits) (string, *Device) {
	t.Helper()
	if err := certs.Init(dir); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"dev0": certs.RoleDevice, "alice": certs.RoleUser, "bob": certs.RoleUser, "ops": certs.RoleAdmin} {
		if err := certs.Issue(dir, name, role, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := certs.ServerConfig(certs.InDir(dir, "dev0"), clientCertAuth)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 2, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d, err := New(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, d, lis, WithTLS(cfg), WithLogger(quietLog())) }()
	t.Cleanup(func() { cancel(); <-done })
	return lis.Addr().String(), d
}

// as dials addr as the named party of the deployment in dir.
func as(t *testing.T, dir, name, addr string) *remote.Client {
	t.Helper()
	cfg, err := certs.ClientConfig(certs.InDir(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	c, err := remote.Dial(addr, remote.WithTLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAnotherIdentityIsRefusedEverywhere: alice keeps a database, a program
// and a running job on a device; bob, another user of the same deployment,
// tries every RPC on them and is refused with the right code, and alice's
// data, program and job are untouched.
func TestAnotherIdentityIsRefusedEverywhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := tlsDevice(t, dir, true)
	alice, bob := as(t, dir, "alice", addr), as(t, dir, "bob", addr)

	l, q := lowered(t)
	a, b := limbsOf(q, 2, 1), limbsOf(q, 2, 2)
	if _, err := alice.Put(ctx, mustPut("acct/b", object.Kind(store.KindCiphertext), 2, 2, b, 8)); err != nil {
		t.Fatal(err)
	}
	raw, err := l.Program.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ProgSet(ctx, &devicepb.ProgSetRequest{Name: "hadd", Program: raw}); err != nil {
		t.Fatal(err)
	}
	up, err := alice.Send(ctx, upload(a, 2))
	if err != nil {
		t.Fatal(err)
	}
	obj := func(o lower.Object) testObject {
		return testObject{o.Space, uint32(o.ID), uint32(o.Polys), uint32(o.Limbs)}
	}
	first, second := obj(l.Inputs[0]), obj(l.Inputs[1])
	send := func(c api.Device, a, b *devicepb.Binding) (*devicepb.SendResponse, error) {
		return c.Send(ctx, &devicepb.SendRequest{Program: "hadd", Output: obj(l.Output).output(), Inputs: []*devicepb.Binding{a, b}})
	}
	uploaded := first.job(up.Job)
	inline := first.inline(a)
	job, err := send(alice, uploaded, second.stored("acct/b"))
	if err != nil {
		t.Fatal(err)
	}

	// Bob's program of the same name is his own, not a clash with alice's.
	other, _ := (&isa.Program{Config: l.Program.Config}).MarshalBinary()
	if _, err := bob.ProgSet(ctx, &devicepb.ProgSetRequest{Name: "hadd", Program: other}); err != nil {
		t.Fatalf("bob's own program named hadd: %v", err)
	}
	refused := map[string]struct {
		call func() error
		want codes.Code
	}{
		"Get":          {func() error { _, err := bob.Get(ctx, &devicepb.GetRequest{Name: "acct/b"}); return err }, codes.PermissionDenied},
		"Get manifest": {func() error { _, err := bob.Get(ctx, &devicepb.GetRequest{Name: "acct/head"}); return err }, codes.PermissionDenied},
		"Put": {func() error {
			_, err := bob.Put(ctx, mustPut("acct/x", object.Kind(store.KindCiphertext), 2, 2, a, 8))
			return err
		}, codes.PermissionDenied},
		"Put over": {func() error {
			_, err := bob.Put(ctx, mustPut("acct/b", object.Kind(store.KindCiphertext), 2, 2, a, 8))
			return err
		}, codes.PermissionDenied},
		"Delete": {func() error { _, err := bob.Delete(ctx, &devicepb.DeleteRequest{Name: "acct/b"}); return err }, codes.PermissionDenied},
		"Send stored": {func() error {
			_, err := send(bob, inline, second.stored("acct/b"))
			return err
		}, codes.PermissionDenied},
		"Recv": {func() error { _, err := bob.Recv(ctx, &devicepb.RecvRequest{Job: job.Job, Fetch: true}); return err }, codes.NotFound},
		"Release": {func() error {
			_, err := bob.Release(ctx, &devicepb.ReleaseRequest{Jobs: []uint64{job.Job}})
			return err
		}, codes.NotFound},
		"Send resident": {func() error {
			_, err := send(bob, inline, second.job(job.Job))
			return err
		}, codes.NotFound},
		"RunStream": {func() error {
			_, err := bob.RunStream(ctx, &devicepb.RunStreamRequest{Program: "p", Stored: []*devicepb.StoredBinding{{Node: 1, Prefix: "acct/"}}})
			return err
		}, codes.PermissionDenied},
		"RunStream keys": {func() error {
			_, err := bob.RunStream(ctx, &devicepb.RunStreamRequest{Program: "p", Keys: []*devicepb.KeyBinding{{Key: "rlk", Object: "acct/keys/rlk"}}})
			return err
		}, codes.PermissionDenied},
		"CopyFrom": {func() error {
			_, err := bob.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: "127.0.0.1:22", Prefix: "acct/"})
			return err
		}, codes.PermissionDenied},
		"QueryLWE": {func() error {
			_, err := bob.QueryLWE(ctx, &devicepb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 256, RecordSize: 44, Generation: "acct/g1",
				Keys: "bob/keys/", Secret: []byte{1}})
			return err
		}, codes.PermissionDenied},
		"QueryLWE packed": {func() error {
			_, err := bob.QueryLWE(ctx, &devicepb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 256, RecordSize: 44, Generation: "acct/g1",
				PackingKeys: []byte{1}})
			return err
		}, codes.PermissionDenied},
		"QueryLWE keys": {func() error {
			_, err := bob.QueryLWE(ctx, &devicepb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 256, RecordSize: 44, Generation: "bob/g1",
				Keys: "acct/members/alice/keys/", Secret: []byte{1}})
			return err
		}, codes.PermissionDenied},
		"Get access list": {func() error { _, err := bob.Get(ctx, &devicepb.GetRequest{Name: "_acl/acct"}); return err }, codes.InvalidArgument},
		"Put access list": {func() error {
			_, err := bob.Put(ctx, mustPut("_acl/acct", object.Kind(store.KindBlob), 1, 1, [][]uint64{make([]uint64, 16)}, 8))
			return err
		}, codes.InvalidArgument},
		"List reserved": {func() error { _, err := bob.List(ctx, &devicepb.ListRequest{Prefix: "_"}); return err }, codes.InvalidArgument},
	}
	for name, r := range refused {
		if err := r.call(); code(err) != r.want {
			t.Errorf("bob's %s on alice's database: %v, want %v", name, err, r.want)
		}
	}
	for _, prefix := range []string{"", "acct/"} {
		ls, err := bob.List(ctx, &devicepb.ListRequest{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ls.Objects {
			t.Errorf("bob lists %s", o.Name)
		}
	}
	if _, err := bob.Config(ctx, &devicepb.ConfigRequest{}); err != nil {
		t.Errorf("bob's Config: %v", err)
	}

	// Alice's job, data and program are as she left them.
	resp, err := alice.Recv(ctx, &devicepb.RecvRequest{Job: job.Job, Fetch: true, Release: true})
	if err != nil {
		t.Fatal(err)
	}
	got := mustLimbs(resp)
	if len(got) != len(a) {
		t.Fatalf("alice's job: %d limbs, want %d", len(got), len(a))
	}
	for i := range got {
		for j := range got[i] {
			if want := (a[i][j] + b[i][j]) % q[i%2]; got[i][j] != want {
				t.Fatalf("alice's job: limb %d coefficient %d = %d, want %d", i, j, got[i][j], want)
			}
		}
	}
	g, err := getObject(ctx, alice, "acct/b")
	if err != nil || g.Data[3][5] != b[3][5] {
		t.Fatalf("alice's object after bob's attempts: %v", err)
	}
	ls, err := alice.List(ctx, &devicepb.ListRequest{})
	if err != nil || len(ls.Objects) != 1 || ls.Objects[0].Name != "acct/b" {
		t.Fatalf("alice lists %+v, %v; want acct/b only (access lists hidden)", ls, err)
	}
	if _, err := send(alice, inline, second.stored("acct/b")); err != nil {
		t.Fatalf("alice's program after bob set his own of that name: %v", err)
	}
}

// TestDeviceAndAdminIdentities: a device may read (to copy a shard) but
// not write; an admin may list, start copies, read a database's manifest
// and drop objects, but neither read data nor write; a copy from an
// address that does not answer says so without the dial error.
func TestDeviceAndAdminIdentities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := tlsDevice(t, dir, true)
	alice, bob, dev, ops := as(t, dir, "alice", addr), as(t, dir, "bob", addr), as(t, dir, "dev0", addr), as(t, dir, "ops", addr)
	_, q := lowered(t)
	b := limbsOf(q, 2, 2)
	if _, err := alice.Put(ctx, mustPut("acct/b", object.Kind(store.KindCiphertext), 2, 2, b, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Get(ctx, &devicepb.GetRequest{Name: "acct/b"}); err != nil {
		t.Errorf("a device reading a shard to copy it: %v", err)
	}
	if _, err := dev.Put(ctx, mustPut("acct/x", object.Kind(store.KindCiphertext), 2, 2, b, 8)); code(err) != codes.PermissionDenied {
		t.Errorf("a device writing: %v, want PermissionDenied", err)
	}
	if _, err := ops.Get(ctx, &devicepb.GetRequest{Name: "acct/b"}); code(err) != codes.PermissionDenied {
		t.Errorf("an admin reading: %v, want PermissionDenied", err)
	}
	ls, err := ops.List(ctx, &devicepb.ListRequest{})
	if err != nil || len(ls.Objects) != 1 {
		t.Errorf("an admin lists %+v, %v; want alice's object", ls, err)
	}
	if _, err := ops.Put(ctx, mustPut("acct/y", object.Kind(store.KindCiphertext), 2, 2, b, 8)); code(err) != codes.PermissionDenied {
		t.Errorf("an admin writing into alice's database: %v, want PermissionDenied", err)
	}
	if _, err := alice.Put(ctx, mustPut(objname.Manifest("acct"), object.Kind(store.KindCiphertext), 2, 2, b, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Get(ctx, &devicepb.GetRequest{Name: objname.Manifest("acct")}); err != nil {
		t.Errorf("an admin reading a manifest (to reconcile a replica): %v", err)
	}
	if _, err := bob.Get(ctx, &devicepb.GetRequest{Name: objname.Manifest("acct")}); code(err) != codes.PermissionDenied {
		t.Errorf("another user reading alice's manifest: %v, want PermissionDenied", err)
	}
	if _, err := bob.Delete(ctx, &devicepb.DeleteRequest{Name: "acct/b"}); code(err) != codes.PermissionDenied {
		t.Errorf("another user dropping alice's object: %v, want PermissionDenied", err)
	}
	if _, err := ops.Delete(ctx, &devicepb.DeleteRequest{Name: "acct/b"}); err != nil {
		t.Errorf("an admin dropping an object (a stale replica): %v", err)
	}
	if _, err := alice.Get(ctx, &devicepb.GetRequest{Name: "acct/b"}); code(err) != codes.NotFound {
		t.Errorf("alice's object after the admin dropped it: %v, want NotFound", err)
	}
	_, err = ops.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: "127.0.0.1:1", Prefix: "acct/"})
	if code(err) != codes.Unavailable || strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "refused") {
		t.Errorf("a copy from a dead address: %v; want Unavailable without the dial error", err)
	}
}

// TestUnauthenticatedCallersRefused: no certificate, or one from another
// CA, gets no further than the handshake; where client certificates are
// optional (--client-cert-auth=false) a caller without one is
// Unauthenticated.
func TestUnauthenticatedCallersRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	addr := tlsDevice(t, dir, true)
	other := t.TempDir()
	if err := certs.Init(other); err != nil {
		t.Fatal(err)
	}
	if err := certs.Issue(other, "mallory", certs.RoleUser, nil); err != nil {
		t.Fatal(err)
	}
	foreign := certs.InDir(other, "mallory")
	foreign.CA = filepath.Join(dir, certs.CAFile)
	noCert, err := certs.ClientConfig(certs.InDir(dir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	noCert.Certificates = nil
	foreignCfg, err := certs.ClientConfig(foreign)
	if err != nil {
		t.Fatal(err)
	}
	for name, dial := range map[string][]remote.Option{
		"no certificate":            {remote.WithTLS(noCert)},
		"another CA's":              {remote.WithTLS(foreignCfg)},
		"plaintext to a TLS device": {remote.WithPlaintext()},
	} {
		c, err := remote.Dial(addr, dial...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.List(ctx, &devicepb.ListRequest{}); err == nil {
			t.Errorf("%s: List succeeded", name)
		}
		c.Close()
	}
	optDir := t.TempDir()
	optional := tlsDevice(t, optDir, false)
	noCert2, err := certs.ClientConfig(certs.InDir(optDir, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	noCert2.Certificates = nil
	c, err := remote.Dial(optional, remote.WithTLS(noCert2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.List(ctx, &devicepb.ListRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("no certificate where one is optional: %v, want Unauthenticated", err)
	}
	if _, err := c.QueryLWE(ctx, &devicepb.LWEQueryRequest{Params: "test", Rows: 512, Cols: 256, RecordSize: 44, Generation: "acct/g1",
		Keys: "acct/members/alice/keys/", Secret: []byte{1}}); code(err) != codes.Unauthenticated {
		t.Errorf("a PIR query without a certificate where one is optional: %v, want Unauthenticated", err)
	}
	// A device refuses to serve plaintext beyond loopback, and to serve
	// without a transport chosen.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 2, PageSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := New(st, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(ctx, d, lis); !errors.Is(err, ErrNoTransport) {
		t.Errorf("Serve without a transport: %v, want ErrNoTransport", err)
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
