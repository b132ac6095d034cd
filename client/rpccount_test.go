package client_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// rpcLog records the methods a device served.
type rpcLog struct {
	mu      sync.Mutex
	methods []string
	// wire, if set, is the wire version Config answers (an older device);
	// packed counts QueryLWE requests carrying packing keys, packedQueries
	// their queries.
	wire          uint32
	packed        int
	packedQueries int
}

func (l *rpcLog) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	l.mu.Lock()
	l.methods = append(l.methods, filepath.Base(info.FullMethod))
	if q, ok := req.(*devicepb.LWEQueryRequest); ok && len(q.GetPackingKeys()) > 0 {
		l.packed++
		l.packedQueries += 1 + len(q.GetMore())
	}
	wire := l.wire
	l.mu.Unlock()
	resp, err := h(ctx, req)
	if cfg, ok := resp.(*devicepb.ConfigResponse); ok && wire != 0 && err == nil {
		cfg = proto.Clone(cfg).(*devicepb.ConfigResponse)
		cfg.WireVersion = wire
		return cfg, nil
	}
	return resp, err
}

func (l *rpcLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.methods
	l.methods = nil
	return out
}

// tlsDevice is an in-process device served over mutual TLS with an RPC
// log's interceptor, and what a test needs to reach it or serve its store
// again.
type tlsDevice struct {
	lis    net.Listener
	log    *rpcLog
	d      *device.Device
	st     *store.Store
	srv    *tls.Config // the device's
	cfg    *tls.Config // a user's (alice's)
	keyDir string      // for her keys
	stop   func()      // stops serving and waits (once; also at the test's end)
}

// countedTLSDevice serves a new device over mutual TLS until the test ends
// or its stop.
func countedTLSDevice(t *testing.T) *tlsDevice {
	t.Helper()
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	if err := certs.Init(pki); err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]certs.Role{"dev0": certs.RoleDevice, "alice": certs.RoleUser} {
		if err := certs.Issue(pki, name, role, nil); err != nil {
			t.Fatal(err)
		}
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
	log := &rpcLog{}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- device.Serve(sctx, d, lis, device.WithTLS(srv), device.WithServerOptions(grpc.ChainUnaryInterceptor(log.intercept)))
	}()
	var once sync.Once
	stopServing := func() { once.Do(func() { stop(); <-done }) }
	t.Cleanup(stopServing)
	cfg, err := certs.ClientConfig(certs.InDir(pki, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	keyDir := filepath.Join(dir, "keys")
	return &tlsDevice{lis: lis, log: log, d: d, st: st, srv: srv, cfg: cfg, keyDir: keyDir, stop: stopServing}
}

// TestFreshProcessGetMakesThreeRPCs: once a key set has queried a ring
// generation (its program and Galois keys are on the device), a new
// process's Get of one record is three RPCs — Config (Open), Get (the
// manifest), QueryLWE (the query) — and returns the record. (The packed
// mode, the default, needs no first query: TestPackedGetMakesThreeRPCs.)
func TestFreshProcessGetMakesThreeRPCs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	td := countedTLSDevice(t)
	lis, log, cfg, keyDir := td.lis, td.log, td.cfg, td.keyDir
	keys, err := client.NewKeys(keyDir)
	if err != nil {
		t.Fatal(err)
	}
	const size, n = 48, 300
	data := secretRecords(n, size)
	first, err := client.Open(ctx, lis.Addr().String(), keys, remote.WithTLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.CreatePIR(ctx, "acct", size, client.PIROptions{LWEParams: "test", InsecureParams: true, LWEMode: client.LWERing}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Get(ctx, "acct", 1); err != nil { // sets the program, uploads the keys
		t.Fatal(err)
	}
	first.Close()

	for _, i := range []int{7, n - 1} {
		log.take()
		keys, err := client.LoadKeys(keyDir) // a new process: nothing in memory
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Open(ctx, lis.Addr().String(), keys, remote.WithTLS(cfg))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Get(ctx, "acct", i)
		c.Close()
		if err != nil || !bytes.Equal(got, data[i*size:(i+1)*size]) {
			t.Fatalf("record %d: %q, %v", i, got, err)
		}
		methods := log.take()
		sort.Strings(methods)
		if i == 7 {
			manifestOnTheWire(t, ctx, lis.Addr().String(), keys, cfg)
		}
		if len(methods) > 3 {
			t.Fatalf("a fresh process's get made %d RPCs %v, want ≤ 3 (Config, Get, QueryLWE)", len(methods), methods)
		}
		t.Logf("record %d: %v", i, methods)
	}

	// A restarted device (its stream programs gone: they live in memory)
	// needs nothing set again: the query is typed (QueryLWE). One that
	// lost the caller's Galois keys answers NotFound; the client lists its
	// keys, uploads the missing ones and asks again.
	td.stop()
	d2, err := device.New(td.st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lis2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx2, stop2 := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() {
		done2 <- device.Serve(sctx2, d2, lis2, device.WithTLS(td.srv), device.WithServerOptions(grpc.ChainUnaryInterceptor(log.intercept)))
	}()
	defer func() { stop2(); <-done2 }()
	fresh := func(i int) []string {
		t.Helper()
		log.take()
		keys, err := client.LoadKeys(keyDir)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Open(ctx, lis2.Addr().String(), keys, remote.WithTLS(cfg))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got, err := c.Get(ctx, "acct", i); err != nil || !bytes.Equal(got, data[i*size:(i+1)*size]) {
			t.Fatalf("record %d: %q, %v", i, got, err)
		}
		return log.take()
	}
	if methods := fresh(5); len(methods) != 3 {
		t.Fatalf("after a restart: %v, want Config, Get, QueryLWE", methods)
	}
	// The owner's raw access: its Galois keys deleted.
	list, err := d2.List(ctx, &devicepb.ListRequest{Prefix: objname.Member("acct", "alice")})
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, o := range list.Objects {
		if strings.Contains(o.Name, "/lwe-") {
			if _, err := d2.Delete(ctx, &devicepb.DeleteRequest{Name: o.Name}); err != nil {
				t.Fatal(err)
			}
			deleted++
		}
	}
	methods := fresh(6)
	count := map[string]int{}
	for _, m := range methods {
		count[m]++
	}
	if deleted == 0 || count["QueryLWE"] != 2 || count["List"] != 1 || count["Put"] != deleted {
		t.Fatalf("after losing %d keys: %v, want Config, Get, QueryLWE, List, %d Puts, QueryLWE", deleted, methods, deleted)
	}
}

// manifestOnTheWire reads the manifest as a query does and checks that it
// crosses the wire at about a byte a byte (the gRPC message bytes received,
// counted by the remote client, against the head object's bytes).
func manifestOnTheWire(t *testing.T, ctx context.Context, addr string, keys *client.Keys, cfg *tls.Config) {
	t.Helper()
	c, err := client.Open(ctx, addr, keys, remote.WithTLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &api.WireCount{}
	if _, err := c.Info(api.WithWireCount(ctx, w), "acct"); err != nil {
		t.Fatal(err)
	}
	head, err := c.Device().Get(ctx, &devicepb.GetRequest{Name: objname.Manifest("acct")})
	if err != nil {
		t.Fatal(err)
	}
	limb := make([]byte, len(head.Data[0]))
	for i, v := range head.Data[0] {
		limb[i] = byte(v)
	}
	raw, err := object.DecodeBlob(limb)
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(w.Received()) / float64(len(raw))
	t.Logf("manifest of %d bytes (a %d-byte limb in the store): %d bytes received, %.3f a byte", len(raw), len(limb), w.Received(), ratio)
	if !w.Measured() || ratio > 1.1 {
		t.Fatalf("the manifest crosses the wire at %.2f bytes a byte (measured %v), want ≤ 1.1", ratio, w.Measured())
	}
}

// TestPackedGetMakesThreeRPCs: in the packed mode nothing is stored for a
// key set before its first query (no Galois keys): over gRPC with TLS and
// the device's access rules, the first Get of a key set that never queried
// the database, in a fresh process, is Config, Get (the manifest) and one
// QueryLWE carrying the packing keys, and returns the record.
func TestPackedGetMakesThreeRPCs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	td := countedTLSDevice(t)
	lis, log, d, cfg, keyDir := td.lis, td.log, td.d, td.cfg, td.keyDir
	keys, err := client.NewKeys(keyDir)
	if err != nil {
		t.Fatal(err)
	}
	const size, n = 48, 300
	data := secretRecords(n, size)
	owner, err := client.Open(ctx, lis.Addr().String(), keys, remote.WithTLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.CreatePIR(ctx, "acct", size, client.PIROptions{LWEParams: "test", InsecureParams: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	owner.Close()
	for _, i := range []int{7, 0, n - 1} {
		log.take()
		keys, err := client.LoadKeys(keyDir) // a new process: nothing in memory
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Open(ctx, lis.Addr().String(), keys, remote.WithTLS(cfg))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Get(ctx, "acct", i) // packed: the default
		c.Close()
		if err != nil || !bytes.Equal(got, data[i*size:(i+1)*size]) {
			t.Fatalf("record %d: %q, %v", i, got, err)
		}
		methods := log.take()
		sort.Strings(methods)
		if strings.Join(methods, ",") != "Config,Get,QueryLWE" {
			t.Fatalf("a fresh process's packed get made the RPCs %v, want Config, Get, QueryLWE", methods)
		}
	}
	list, err := d.List(ctx, &devicepb.ListRequest{Prefix: objname.Member("acct", "alice")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Objects {
		if strings.Contains(o.Name, "/lwe-") {
			t.Fatalf("a Galois key stored in the packed mode: %s", o.Name)
		}
	}
	// A device that says an older wire version (no packed mode) is not
	// asked a packed query it would not understand: the generation stores
	// no diagonals for the ring stage, so the get fails, named.
	log.mu.Lock()
	log.wire, log.packed = api.PackedWireVersion-1, 0
	log.mu.Unlock()
	c, err := client.Open(ctx, lis.Addr().String(), keys, remote.WithTLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Get(ctx, "acct", 5); !errors.Is(err, client.ErrPackedOnly) {
		t.Fatalf("record 5 of a packed-only generation from an older device: %q, %v; want ErrPackedOnly", got, err)
	}
	if log.packed != 0 {
		t.Fatalf("%d packed queries asked of a device of wire version %d", log.packed, api.PackedWireVersion-1)
	}
}
