package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/cluster/local"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

const deviceEnv = "ROSEMARY_CLUSTER_DEVICE" // "store dir|etcd endpoints (comma-separated)|id|certificate dir[|scrub interval[|tls[|metrics address]]]" of a helper device process

// memberEnv carries local.ServeMember's arguments (separated by 0x1f) to a
// helper etcd member process.
const memberEnv = "ROSEMARY_CLUSTER_ETCD_MEMBER"

// spawnMember runs an etcd member in a process of this test binary.
func spawnMember(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memberEnv+"="+strings.Join(args, "\x1f"))
	cmd.Stderr = os.Stderr
	return cmd
}

// TestMain lets the test binary serve as a device process that joins the
// cluster, or as an etcd member (the tests SIGKILL such processes).
func TestMain(m *testing.M) {
	if v := os.Getenv(memberEnv); v != "" {
		if err := local.ServeMember(context.Background(), strings.Split(v, "\x1f")); err != nil {
			fmt.Fprintln(os.Stderr, "etcd member:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if v := os.Getenv(deviceEnv); v != "" {
		parts := strings.Split(v, "|")
		var scrub time.Duration
		if len(parts) > 4 {
			scrub, _ = time.ParseDuration(parts[4])
		}
		if len(parts) > 6 && parts[6] != "" {
			if err := serveMetrics(parts[6]); err != nil {
				fmt.Fprintln(os.Stderr, "device:", err)
				os.Exit(1)
			}
		}
		if err := serveDevice(parts[0], parts[1], parts[2], parts[3], scrub, len(parts) > 5 && parts[5] == "tls"); err != nil {
			fmt.Fprintln(os.Stderr, "device:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// deviceRegistry is the helper device's metrics registry (serveMetrics).
var deviceRegistry *prometheus.Registry

// serveMetrics serves the helper device's /metrics at addr (its device
// registers into deviceRegistry once it exists).
func serveMetrics(addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	deviceRegistry = prometheus.NewRegistry()
	go http.Serve(lis, promhttp.HandlerFor(deviceRegistry, promhttp.HandlerOpts{}))
	return nil
}

// serveDevice serves a device that joins the cluster's etcd with its own
// certificate from certDir, scrubbing its store every scrub if positive;
// plaintext to its clients and peers, or with useTLS on mutual TLS with
// that certificate.
func serveDevice(dir, endpoint, id, certDir string, scrub time.Duration, useTLS bool) error {
	st, err := store.Open(dir, layout.Layout{Channels: 2, PageSize: 4096})
	if err != nil {
		return err
	}
	d, err := device.New(st, device.DefaultLimits())
	if err != nil {
		return err
	}
	if deviceRegistry != nil {
		if err := d.RegisterMetrics(deviceRegistry); err != nil {
			return err
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx := context.Background()
	tlsCfg, err := certs.ClientConfig(certs.InDir(certDir, id))
	if err != nil {
		return err
	}
	serveWith := device.WithPlaintext()
	d.DialPeersWith(remote.WithPlaintext())
	if useTLS {
		srv, err := certs.ServerConfig(certs.InDir(certDir, id), true)
		if err != nil {
			return err
		}
		serveWith = device.WithTLS(srv)
		d.DialPeersWith(remote.WithTLS(tlsCfg.Clone()))
	}
	leave, err := cluster.JoinRetrying(ctx, cluster.Etcd{Endpoints: strings.Split(endpoint, ","), TLS: tlsCfg}, id, lis.Addr().String(), dir, 2, 2*time.Second, nil)
	if err != nil {
		return err
	}
	defer leave()
	if scrub > 0 {
		go d.ScrubEvery(ctx, scrub, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	fmt.Printf("listening %s\n", lis.Addr())
	return device.Serve(ctx, d, lis, serveWith)
}

// testEtcd is a real etcd server in the test process, on TLS with RBAC,
// and the certificates of its parties (newPKI).
type testEtcd struct {
	endpoint string
	pki      string // certificate directory
}

// as is how party name reaches it.
func (e *testEtcd) as(t *testing.T, name string) cluster.Etcd {
	t.Helper()
	cfg, err := certs.ClientConfig(certs.InDir(e.pki, name))
	if err != nil {
		t.Fatal(err)
	}
	return cluster.Etcd{Endpoints: []string{e.endpoint}, TLS: cfg}
}

// startEtcd runs a real etcd server in the test process: TLS 1.3 with
// client certificates, RBAC on, the coordinator its admin, devices
// d0…d5 and users alice and bob its users.
func startEtcd(t *testing.T) *testEtcd {
	t.Helper()
	pki := newPKI(t)
	e, err := local.StartEtcd(t.TempDir(), "127.0.0.1:0", certs.InDir(pki, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	te := &testEtcd{endpoint: e.Clients[0].Addr().String(), pki: pki}
	if err := local.Authorize(context.Background(), te.as(t, "coordinator"), []string{"d0", "d1", "d2", "d3", "d4", "d5"}); err != nil {
		t.Fatal(err)
	}
	admin, err := cluster.Connect(context.Background(), te.as(t, "coordinator"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, u := range []string{"alice", "bob"} {
		if err := cluster.AddUser(context.Background(), admin, certs.Identity{Name: u, Role: certs.RoleUser}); err != nil {
			t.Fatal(err)
		}
	}
	return te
}

type proc struct {
	cmd  *exec.Cmd
	addr string
}

// startDevice starts a device process that joins the cluster as id.
func startDevice(t *testing.T, etcd *testEtcd, id string) *proc {
	t.Helper()
	return startDeviceAt(t, etcd, id, filepath.Join(t.TempDir(), "store"), 0, nil)
}

// startDeviceAt starts a device process over the store in dir (created
// if absent) that joins the cluster as id, scrubs every scrub (0: never)
// and logs to stderr (nil: the test's).
func startDeviceAt(t *testing.T, etcd *testEtcd, id, dir string, scrub time.Duration, stderr io.Writer) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), deviceEnv+"="+dir+"|"+etcd.endpoint+"|"+id+"|"+etcd.pki+"|"+scrub.String())
	cmd.Stderr = stderr
	return startProc(t, cmd, id)
}

// startProc starts a helper device process (its stderr the test's unless
// set) and waits until it listens.
func startProc(t *testing.T, cmd *exec.Cmd, id string) *proc {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("device %s did not start: %v", id, err)
	}
	return &proc{cmd: cmd, addr: strings.TrimSpace(strings.TrimPrefix(line, "listening "))}
}

func waitDevices(t *testing.T, c *cluster.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ds, err := cluster.Devices(context.Background(), c.Etcd())
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == n {
			for _, d := range ds {
				if d.Capacity <= 0 || d.Free <= 0 || d.Free > d.Capacity {
					t.Fatalf("device %s registered capacity %d, free %d", d.ID, d.Capacity, d.Free)
				}
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the cluster did not reach %d devices", n)
}

func records(seed uint64, n, size int) []byte {
	b := make([]byte, n*size)
	var key [32]byte
	key[0] = byte(seed)
	rand.NewChaCha8(key).Read(b)
	return b
}

// newCluster starts etcd and devices; its client is the coordinator (an
// admin: it repairs), who owns the databases it creates.
func newCluster(t *testing.T, devices int) (*cluster.Client, *testEtcd, []*proc) {
	t.Helper()
	endpoint := startEtcd(t)
	var procs []*proc
	for i := 0; i < devices; i++ {
		procs = append(procs, startDevice(t, endpoint, fmt.Sprintf("d%d", i)))
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
	// The default scheme, LWE in the packed mode: the package's tests took
	// 205 s with it (load 4), against 401 s on BGV shards (and 440 s on
	// LWE with the ring stage, idle). The gated cluster (failover_test.go),
	// the chaos schedule (faults_test.go) and the admin's cluster
	// (admin_test.go) keep BGV shards, so that scheme's repair and
	// failover stay tested.
	c.Scheme = ""
	c.Programs = programs.New()
	waitDevices(t, c, devices)
	return c, endpoint, procs
}

const recSize = 256

// createPIR creates the PIR database name of recSize-byte records in shards
// × replicas and loads data into it as its first generation.
func createPIR(t *testing.T, c *cluster.Client, name string, data []byte, shards, replicas int) *cluster.Map {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreatePIR(ctx, name, recSize, shards, replicas); err != nil {
		t.Fatal(err)
	}
	m, err := c.Load(ctx, name, bytes.NewReader(data), dataset.FixedSize)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A database in 4 shards × 2 replicas over 4 device processes answers 20
// PIR queries exactly while one device is SIGKILLed (its shards answered
// by their other replica, then re-replicated device to device) and
// another joins.
func TestClusterPIRSurvivesDeviceLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and five device processes")
	}
	ctx := context.Background()
	c, endpoint, procs := newCluster(t, 4)
	const n = 4 * 8192 // 128 plaintexts per shard, scanned on its device
	data := records(1, n, recSize)
	m := createPIR(t, c, "db", data, 4, 2)
	if m.Generation != 1 || m.Records != n {
		t.Fatalf("loaded %+v", m)
	}
	// The coordinator repairs and rebalances as devices come and go.
	mctx, stopMaintain := context.WithCancel(ctx)
	defer stopMaintain()
	go c.Maintain(mctx, nil)
	rng := rand.New(rand.NewPCG(2, 3))
	correct := 0
	// 20 queries: 4 before the kill, 4 while d0 is dead but listed, 6
	// after the repair and 6 after d4 joined (every Get is four packed LWE
	// shard queries).
	const queries = 20
	for q := 0; q < queries; q++ {
		switch q {
		case 4:
			procs[0].cmd.Process.Signal(syscall.SIGKILL)
		case 8:
			waitDevices(t, c, 3)
			waitMap(t, c, func(m *cluster.Map) bool { return !lists(m, "d0") })
		case 14:
			startDevice(t, endpoint, "d4")
			waitDevices(t, c, 4)
			waitMap(t, c, func(m *cluster.Map) bool { return replicasOn(m, "d4") == 2 })
		}
		i := rng.IntN(n)
		a, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatalf("query %d (record %d): %v", q, i, err)
		}
		if bytes.Equal(a.Record, data[i*recSize:(i+1)*recSize]) && a.Generation == 1 {
			correct++
		}
	}
	if correct != queries {
		t.Fatalf("%d of %d queries correct", correct, queries)
	}
	m, err := c.Info(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	load := map[string]int{}
	for _, sh := range m.Shards {
		if len(sh.Replicas) != 2 {
			t.Fatalf("shard %d has %d replicas after the repair", sh.ID, len(sh.Replicas))
		}
		for _, id := range sh.Replicas {
			if id == "d0" {
				t.Fatalf("shard %d still lists the dead device", sh.ID)
			}
			load[id]++
		}
	}
	// The device that joined took shards: 8 replicas over 4 devices.
	for _, id := range []string{"d1", "d2", "d3", "d4"} {
		if load[id] != 2 {
			t.Fatalf("replicas per device after the join: %v, want 2 each", load)
		}
	}
}

// Publishing generation g+1 while queries run: every answer is generation
// g's record or generation g+1's, whole, as its generation says.
func TestClusterPublishWhileQuerying(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, _ := newCluster(t, 2)
	const n = 2 * 8192
	gens := map[uint64][]byte{1: records(1, n, recSize), 2: records(2, n, recSize)}
	createPIR(t, c, "db", gens[1], 2, 1)
	var wg sync.WaitGroup
	done := make(chan struct{})
	var mu sync.Mutex
	seen := map[uint64]int{}
	var bad []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(4, 5))
		for {
			select {
			case <-done:
				return
			default:
			}
			i := rng.IntN(n)
			a, err := c.Get(ctx, "db", i)
			mu.Lock()
			switch {
			case err != nil:
				bad = append(bad, err.Error())
			case !bytes.Equal(a.Record, gens[a.Generation][i*recSize:(i+1)*recSize]):
				bad = append(bad, fmt.Sprintf("record %d of generation %d differs", i, a.Generation))
			default:
				seen[a.Generation]++
			}
			mu.Unlock()
		}
	}()
	time.Sleep(time.Second)
	if _, err := c.Load(ctx, "db", bytes.NewReader(gens[2]), dataset.FixedSize); err != nil {
		t.Fatal(err)
	}
	// Queries go on until one is answered from generation 2 (however slow
	// the machine; two minutes without one is a hang).
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		got := seen[2] > 0 || len(bad) > 0
		mu.Unlock()
		if got {
			break
		}
	}
	close(done)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d bad answers, first: %s", len(bad), bad[0])
	}
	if seen[1] == 0 || seen[2] == 0 {
		t.Fatalf("answers by generation %v: want both", seen)
	}
}

// Per query, the bytes between the client and each device do not grow
// with the number of shards (K = 1, 2, 4 devices, one shard each).
func TestClusterBytesPerDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, _ := newCluster(t, 4)
	c.Scheme = "" // the default: LWE shards
	per, wire := map[int]int64{}, map[int]int64{}
	for _, k := range []int{1, 2, 4} {
		name := fmt.Sprintf("k%d", k)
		n := k * 32768
		data := records(uint64(k), n, recSize)
		createPIR(t, c, name, data, k, 1)
		a, err := c.Get(ctx, name, n-1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Record, data[(n-1)*recSize:]) {
			t.Fatalf("K=%d: the last record differs", k)
		}
		if len(a.DeviceBytes) != k {
			t.Fatalf("K=%d: %d devices answered", k, len(a.DeviceBytes))
		}
		for dev, b := range a.DeviceBytes {
			p := a.PayloadBytes[dev]
			if per[k] != 0 && per[k] != p {
				t.Fatalf("K=%d: devices answered with %d and %d bytes of ciphertexts", k, per[k], p)
			}
			per[k] = p
			// Measured on the connection: the ciphertexts' payloads and
			// the messages' framing (names, lengths, gRPC headers: a few
			// hundred bytes), nothing more.
			if b < p || b > p+4096 {
				t.Fatalf("K=%d: %s moved %d bytes for %d bytes of ciphertexts", k, dev, b, p)
			}
			wire[k] = max(wire[k], b)
		}
	}
	if per[1] != per[2] || per[2] != per[4] {
		t.Fatalf("ciphertext bytes per device per query: %v, want one figure", per)
	}
	t.Logf("bytes per device per query at K = 1, 2, 4: %v measured on the connection, %v of ciphertexts", wire, per)
}

// Faults: etcd unreachable, a shard with no live replica.
func TestClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Open(ctx, cluster.Etcd{Endpoints: []string{"127.0.0.1:1"}}, keys); !errors.Is(err, cluster.ErrEtcd) {
		t.Fatalf("open with etcd unreachable: %v, want ErrEtcd", err)
	}
	c, _, procs := newCluster(t, 2)
	const n = 2 * 32768
	data := records(7, n, recSize)

	// A replica listed for a generation it does not hold is refused and
	// its other replica answers.
	createPIR(t, c, "two", data, 2, 2)
	m2, _ := c.Info(ctx, "two")
	first := m2.Shards[0].Replicas[0]
	for i, p := range procs {
		if fmt.Sprintf("d%d", i) == first {
			dc, err := client.Open(ctx, p.addr, keys, remote.WithPlaintext())
			if err != nil {
				t.Fatal(err)
			}
			if err := wipeDB(ctx, dc.Device(), m2.ShardName(0)); err != nil {
				t.Fatal(err)
			}
			dc.Close()
		}
	}
	a, err := c.Get(ctx, "two", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Record, data[2*recSize:3*recSize]) || a.Retries == 0 {
		t.Fatalf("record 2 with shard 0 missing on %s: retries %d, exact %v", first, a.Retries, bytes.Equal(a.Record, data[2*recSize:3*recSize]))
	}

	createPIR(t, c, "db", data, 2, 1)
	m, _ := c.Info(ctx, "db")
	victim := m.Shards[1].Replicas[0]
	for i, p := range procs {
		if fmt.Sprintf("d%d", i) == victim {
			p.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	_, err = c.Get(ctx, "db", 5)
	if !errors.Is(err, cluster.ErrNoReplica) || !strings.Contains(err.Error(), "shard 1") {
		t.Fatalf("get with shard 1 gone: %v, want ErrNoReplica naming shard 1", err)
	}
	if _, err := c.Repair(ctx, "db"); err != nil && !errors.Is(err, cluster.ErrNoReplica) {
		t.Fatalf("repair with a shard gone: %v", err)
	}
}

// A vector database sharded over two devices: every shard searches its
// part on its device, the client merges — top-1 equals brute force.
func TestClusterNearest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, _ := newCluster(t, 2)
	r := rand.New(rand.NewPCG(11, 12))
	const n, dim = 2000, 16
	db := make([][]float32, n)
	for i := range db {
		db[i] = make([]float32, dim)
		for k := range db[i] {
			db[i][k] = float32(r.NormFloat64())
		}
	}
	var file bytes.Buffer
	if err := dataset.WriteFVecs(&file, db); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVectors(ctx, "v", dim, 2, 1, client.VectorOptions{Metric: client.L2}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadVectors(ctx, "v", &file, dataset.FVecs); err != nil {
		t.Fatal(err)
	}
	for q := 0; q < 20; q++ {
		query := make([]float32, dim)
		for k := range query {
			query[k] = float32(r.NormFloat64())
		}
		res, err := c.Nearest(ctx, "v", query, 3)
		if err != nil {
			t.Fatal(err)
		}
		best, bestD := -1, 0.0
		for i, x := range db {
			var d float64
			for k := range x {
				t := float64(x[k] - query[k])
				d += t * t
			}
			if best < 0 || d < bestD {
				best, bestD = i, d
			}
		}
		if res.IDs[0] != best {
			t.Fatalf("query %d: nearest %d, brute force %d", q, res.IDs[0], best)
		}
	}
}

func lists(m *cluster.Map, id string) bool { return replicasOn(m, id) > 0 }

func replicasOn(m *cluster.Map, id string) int {
	n := 0
	for _, sh := range m.Shards {
		for _, r := range sh.Replicas {
			if r == id {
				n++
			}
		}
	}
	return n
}

// waitMap waits until the database's map satisfies ok.
func waitMap(t *testing.T, c *cluster.Client, ok func(*cluster.Map) bool) {
	t.Helper()
	waitMapOf(t, c, "db", ok)
}

// waitMapOf waits until database name's map is ok.
func waitMapOf(t *testing.T, c *cluster.Client, name string, ok func(*cluster.Map) bool) {
	t.Helper()
	// A bound on liveness, not a figure: copying a shard replica took
	// 11 s on a quiet machine, and more than 60 s once at a load average
	// near 18.
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		m, err := c.Info(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if ok(m) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the coordinator did not repair the map in time")
}
