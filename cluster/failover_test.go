package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// gate stalls every call a device serves while it is shut, as a device
// that froze with its connections open would: calls wait until the gate
// opens or their caller gives up.
type gate struct {
	mu   sync.Mutex
	shut chan struct{} // nil: open
	// rot, when set, flips a bit of every data object the device serves
	// by Get (access lists and manifests excepted) after the device
	// checksummed it: a source whose data goes bad on its way out.
	rot atomic.Bool
	dir string // the device's store directory
	// calls, while recording, logs every unary call the device serves.
	calls struct {
		sync.Mutex
		on  bool
		log []string
	}
}

// record starts logging calls afresh; recorded stops and returns them.
func (g *gate) record() {
	g.calls.Lock()
	defer g.calls.Unlock()
	g.calls.on, g.calls.log = true, nil
}

func (g *gate) recorded() []string {
	g.calls.Lock()
	defer g.calls.Unlock()
	g.calls.on = false
	return g.calls.log
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	shut := g.shut
	g.mu.Unlock()
	if shut == nil {
		return nil
	}
	select {
	case <-shut:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	resp, err := h(ctx, req)
	g.calls.Lock()
	if g.calls.on {
		// The call's method and the sizes of its messages on the wire.
		size := func(m any) int {
			if pm, ok := m.(proto.Message); ok && pm != nil {
				return proto.Size(pm)
			}
			return -1
		}
		g.calls.log = append(g.calls.log, fmt.Sprintf("%s %d→%d %v", info.FullMethod, size(req), size(resp), status.Code(err)))
	}
	g.calls.Unlock()
	if r, ok := req.(*devicepb.GetRequest); ok && g.rot.Load() && !strings.HasPrefix(r.GetName(), objname.ACL("")) &&
		!strings.HasSuffix(r.GetName(), "/head") {
		if o, ok := resp.(*devicepb.GetResponse); ok && err == nil && len(o.Data) > 0 && len(o.Data[0]) > 0 {
			o.Data[0][0] ^= 0x01
		}
	}
	return resp, err
}

func (g *gate) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.wait(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// startGatedDevice serves a device in this process behind a gate and
// joins it to the cluster at endpoint as id.
func startGatedDevice(t *testing.T, endpoint *testEtcd, id string) (*gate, string, *device.Device) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := store.Open(dir, layout.Layout{Channels: 2, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	d.DialPeersWith(remote.WithPlaintext())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{dir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		device.Serve(ctx, d, lis, device.WithPlaintext(), device.WithGrace(0),
			device.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			device.WithServerOptions(grpc.ChainUnaryInterceptor(g.unary), grpc.ChainStreamInterceptor(g.stream)))
	}()
	leave, err := cluster.Join(ctx, endpoint.as(t, id), id, lis.Addr().String(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.open()
		leave()
		cancel()
		<-served
		st.Close()
	})
	return g, lis.Addr().String(), d
}

// newGatedCluster is an etcd and n gated devices d0…d(n−1) in this
// process, with a client.
func newGatedCluster(t *testing.T, n int) (*cluster.Client, []*gate, []string) {
	c, gates, addrs, _ := newGatedClusterDevices(t, n)
	return c, gates, addrs
}

func newGatedClusterDevices(t *testing.T, n int) (*cluster.Client, []*gate, []string, []*device.Device) {
	t.Helper()
	endpoint := startEtcd(t)
	var gates []*gate
	var addrs []string
	var devs []*device.Device
	for i := range n {
		g, addr, d := startGatedDevice(t, endpoint, "d"+string(rune('0'+i)))
		gates, addrs, devs = append(gates, g), append(addrs, addr), append(devs, d)
	}
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Open(context.Background(), endpoint.as(t, "coordinator"), keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Scheme = client.SchemeBGV // BGV shards here, LWE in newCluster: both schemes' failover tested
	c.Programs = programs.New()
	waitDevices(t, c, n)
	return c, gates, addrs, devs
}

// A replica that stalls (its device frozen, its connection open) costs a
// query its share of the caller's deadline, not the deadline: the other
// replica answers, exactly, within it.
func TestClusterFailoverWithinDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	c, gates, _ := newGatedCluster(t, 2)
	const n = 4096
	data := records(21, n, recSize)
	m := createPIR(t, c, "db", data, 1, 2)
	if got := m.Shards[0].Replicas; len(got) != 2 || got[0] != "d0" || got[1] != "d1" {
		t.Fatalf("replicas %v, want [d0 d1] (d0 tried first)", got)
	}
	// The stalled device is the first replica, still registered.
	gates[0].close()
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	const i = 1234
	start := time.Now()
	a, err := c.Get(ctx, "db", i)
	if err != nil {
		t.Fatalf("get with d0 stalled: %v", err)
	}
	t.Logf("a get with its first replica stalled, under a 12 s deadline: %v (a reported figure, not a check)", time.Since(start))
	if !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) {
		t.Fatalf("record %d differs", i)
	}
	if a.Retries != 1 || a.DeviceBytes["d1"] == 0 || a.DeviceBytes["d0"] != 0 {
		t.Fatalf("answered by %v after %d retries, want d1 after 1", a.DeviceBytes, a.Retries)
	}
	// Resumed, the first replica answers again (on a new connection).
	gates[0].open()
	a, err = c.Get(context.Background(), "db", i+1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Record, data[(i+1)*recSize:(i+2)*recSize]) || a.Retries != 0 || a.DeviceBytes["d0"] == 0 {
		t.Fatalf("after the resume: exact %v, retries %d, devices %v", bytes.Equal(a.Record, data[(i+1)*recSize:(i+2)*recSize]), a.Retries, a.DeviceBytes)
	}
}

// One shard's failure on a device does not cancel another shard's call on
// the same device: the connection it found broken closes only once idle.
func TestClusterFailureKeepsOtherShardsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, _, addrs := newGatedCluster(t, 2)
	const n = 2 * 4096
	data := records(22, n, recSize)
	m := createPIR(t, c, "db", data, 2, 2)
	for _, sh := range m.Shards {
		if sh.Replicas[0] != "d0" {
			t.Fatalf("shard %d on %v, want d0 first", sh.ID, sh.Replicas)
		}
	}
	// Shard 1 is gone from d0: its query fails there at once (and the
	// client forgets the connection) while shard 0's runs on d0.
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := client.Open(ctx, addrs[0], keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	if err := wipeDB(ctx, dc.Device(), m.ShardName(1)); err != nil {
		t.Fatal(err)
	}
	dc.Close()
	for q, i := range []int{0, 2, 4} { // shard 0's records
		a, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) {
			t.Fatalf("query %d: record %d differs", q, i)
		}
		if a.Retries != 1 || a.DeviceBytes["d0"] == 0 || a.DeviceBytes["d1"] == 0 {
			t.Fatalf("query %d: %d retries, devices %v: want shard 0 from d0, shard 1 from d1 after one retry", q, a.Retries, a.DeviceBytes)
		}
	}
}

// A device whose lease is lost while it lives registers again.
func TestRegisterAfterLeaseLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	ctx := context.Background()
	endpoint := startEtcd(t)
	cli, err := cluster.Connect(ctx, endpoint.as(t, "d0"))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	stop, err := cluster.Register(ctx, cli, cluster.DeviceInfo{ID: "d0", Addr: "127.0.0.1:1"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	lease := func() clientv3.LeaseID {
		resp, err := cli.Get(ctx, "/rosemary/devices/d0")
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0
		}
		return clientv3.LeaseID(resp.Kvs[0].Lease)
	}
	first := lease()
	if first == 0 {
		t.Fatal("d0 is not registered")
	}
	// Revoking the lease removes the device at once, as an expiry would.
	if _, err := cli.Revoke(ctx, first); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if l := lease(); l != 0 && l != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("d0 did not register again after losing its lease")
		}
	}
	ds, err := cluster.Devices(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != "d0" || ds[0].Addr != "127.0.0.1:1" {
		t.Fatalf("devices after the loss: %+v", ds)
	}
	// stop revokes the new lease: the device leaves for good.
	stop()
	if l := lease(); l != 0 {
		t.Fatalf("after stop d0 is still registered (lease %x)", l)
	}
}

// A device process paused (SIGSTOP) past its lease leaves the cluster;
// while it is away queries are answered by the other replica within their
// deadline; resumed (SIGCONT), it registers again.
func TestClusterPausedDeviceRejoins(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, procs := newCluster(t, 2)
	const n = 4096
	data := records(23, n, recSize)
	createPIR(t, c, "db", data, 1, 2)
	if err := procs[0].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer procs[0].cmd.Process.Signal(syscall.SIGCONT)
	qctx, cancel := context.WithTimeout(ctx, 12*time.Second)
	start := time.Now()
	a, err := c.Get(qctx, "db", 77)
	cancel()
	if err != nil {
		t.Fatalf("get with d0 paused: %v", err)
	}
	t.Logf("a get with its first replica's device paused, under a 12 s deadline: %v (a reported figure, not a check)", time.Since(start))
	if !bytes.Equal(a.Record, data[77*recSize:78*recSize]) || a.DeviceBytes["d1"] == 0 || a.DeviceBytes["d0"] != 0 {
		t.Fatalf("with d0 paused: exact %v, devices %v", bytes.Equal(a.Record, data[77*recSize:78*recSize]), a.DeviceBytes)
	}
	waitDevices(t, c, 1) // the lease (2 s) expired
	if err := procs[0].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	waitDevices(t, c, 2)
	t.Logf("resumed, the device was live again after %v", time.Since(start))
}

// shardDatabases lists, per device address, the shard databases of name
// it stores (any object of theirs counts).
func shardDatabases(t *testing.T, addrs []string, name string) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]map[string]bool{}
	for _, addr := range addrs {
		dev, err := remote.Dial(addr, remote.WithPlaintext())
		if err != nil {
			t.Fatal(err)
		}
		list, err := dev.List(ctx, &devicepb.ListRequest{Prefix: name + ".g"})
		dev.Close()
		if err != nil {
			t.Fatal(err)
		}
		if list.Truncated {
			t.Fatalf("%s: list truncated", addr)
		}
		out[addr] = map[string]bool{}
		for _, o := range list.Objects {
			db, _, _ := strings.Cut(o.Name, "/")
			out[addr][db] = true
		}
	}
	return out
}

// wantShards is where m says its shard databases are, per device address.
func wantShards(m *cluster.Map, addrOf map[string]string, into map[string]map[string]bool) {
	for s, sh := range m.Shards {
		for _, id := range sh.Replicas {
			if into[addrOf[id]] == nil {
				into[addrOf[id]] = map[string]bool{}
			}
			into[addrOf[id]][m.ShardName(s)] = true
		}
	}
}

// Loads of 4 shards × 2 replicas over 4 devices leave on the devices
// exactly the shard databases of the current generation and the one
// before it (kept for queries in flight), every shard id of them: none of
// an older generation. A stale shard database left on a device (one that
// was away when its generation was dropped) is swept by the coordinator.
func TestClusterLoadsLeaveNoOldGenerations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, _, addrs := newGatedCluster(t, 4)
	addrOf := map[string]string{}
	for i, a := range addrs {
		addrOf["d"+string(rune('0'+i))] = a
	}
	const n = 4 * 1024
	if _, err := c.CreatePIR(ctx, "db", recSize, 4, 2); err != nil {
		t.Fatal(err)
	}
	var maps []*cluster.Map
	var last []byte
	for g := 1; g <= 3; g++ {
		last = records(uint64(30+g), n, recSize)
		m, err := c.Load(ctx, "db", bytes.NewReader(last), dataset.FixedSize)
		if err != nil {
			t.Fatal(err)
		}
		if m.Generation != uint64(g) {
			t.Fatalf("load %d published generation %d", g, m.Generation)
		}
		maps = append(maps, m)
	}
	want := map[string]map[string]bool{}
	wantShards(maps[1], addrOf, want)
	wantShards(maps[2], addrOf, want)
	got := shardDatabases(t, addrs, "db")
	for _, addr := range addrs {
		if !sameSet(got[addr], want[addr]) {
			t.Fatalf("device %s holds %v, want %v (generations 2 and 3 as mapped)", addr, keysOf(got[addr]), keysOf(want[addr]))
		}
	}
	a, err := c.Get(ctx, "db", n-1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Generation != 3 || !bytes.Equal(a.Record, last[(n-1)*recSize:]) {
		t.Fatalf("after three loads: generation %d, exact %v", a.Generation, bytes.Equal(a.Record, last[(n-1)*recSize:]))
	}

	// A shard database of generation 1 reappears on d3 (its device was
	// away when generation 1 was dropped): the coordinator's pass removes
	// it and keeps generations 2 and 3.
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := client.Open(ctx, addrs[3], keys, remote.WithPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	stale := maps[0].ShardName(3)
	if _, err := dc.CreatePIR(ctx, stale, recSize, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Load(ctx, stale, bytes.NewReader(records(40, 100, recSize)), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	if !shardDatabases(t, addrs[3:], "db")[addrs[3]][stale] {
		t.Fatal("the planted stale shard is not listed")
	}
	if _, err := c.Repair(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	got = shardDatabases(t, addrs, "db")
	for _, addr := range addrs {
		if !sameSet(got[addr], want[addr]) {
			t.Fatalf("after the sweep device %s holds %v, want %v", addr, keysOf(got[addr]), keysOf(want[addr]))
		}
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A replica whose registration lapsed — its key gone from etcd while the
// device serves on (a lease not renewed across a quorum loss) — is still
// asked, at the address the client last saw, once the live replicas fail:
// with the registered replica frozen, the lapsed one answers, exactly.
func TestClusterAsksALapsedReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	c, gates, _ := newGatedCluster(t, 2)
	const n = 256
	data := records(23, n, recSize)
	createPIR(t, c, "db", data, 1, 2)
	wantExact(t, c, data, 0) // the client reads the registry: it has seen both
	ctx := context.Background()
	if _, err := c.Etcd().Delete(ctx, cluster.DeviceKey("d0")); err != nil {
		t.Fatal(err)
	}
	ds, err := cluster.Devices(ctx, c.Etcd())
	if err != nil || len(ds) != 1 || ds[0].ID != "d1" {
		t.Fatalf("registered after d0's key went: %+v, %v; want d1 alone", ds, err)
	}
	gates[1].close() // the only registered replica stalls
	defer gates[1].open()
	c.ShardTimeout = 2 * time.Second
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const i = 77
	a, err := c.Get(qctx, "db", i)
	if err != nil {
		t.Fatalf("get with d1 frozen and d0 unregistered: %v", err)
	}
	if !bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) || a.DeviceBytes["d0"] == 0 {
		t.Fatalf("record %d answered by %v: want d0's exact answer", i, a.DeviceBytes)
	}
}
