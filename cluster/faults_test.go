package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// The fault schedule's knobs: `go test ./cluster -run FaultSchedule
// -faults.seed 7 -faults.duration 5m` runs a longer schedule than the
// default (faultSteps faults).
var (
	faultSeed     = flag.Uint64("faults.seed", 1, "TestClusterFaultSchedule: the schedule's seed")
	faultDuration = flag.Duration("faults.duration", 0, "TestClusterFaultSchedule: inject faults for this long (0: a short schedule of faultSteps faults)")
)

const (
	faultSteps    = 8                // faults of the default schedule
	faultDevices  = 4                // device processes
	faultShards   = 2                // shards × faultReplicas replicas
	faultReplicas = 2                //
	faultRecords  = 512              // records of every generation
	faultScrub    = time.Second      // each device's scrub interval
	queryDeadline = 20 * time.Second // each query's deadline
	// hangSlack: a query still running this long after its deadline is a
	// hang (an anomaly), whatever the machine's load.
	hangSlack = time.Minute
	// converge bounds waiting for the cluster to heal: before a
	// destructive fault, and at the end.
	converge = 3 * time.Minute
)

// faultData is generation g's records: every generation its own, so an
// answer is checked against the generation it says it came from.
func faultData(seed uint64, g uint64) []byte { return records(seed*31+g, faultRecords, recSize) }

// faultDevice is one device process and what the schedule did to it.
type faultDevice struct {
	id, dir string
	p       *proc // nil while down
	stopped bool  // SIGSTOPped
}

// faultRun is one schedule against one cluster.
type faultRun struct {
	t    *testing.T
	seed uint64
	etcd *testEtcd
	c    *cluster.Client // the queries' and the loads' client
	keys *client.Keys
	devs []*faultDevice

	logs *deviceLogs             // the devices' stderr, counted
	regs [2]*prometheus.Registry // the query client's and the coordinator's metrics

	mu        sync.Mutex
	faults    map[string]int // injected, by kind
	answered  int            // queries answered, each checked exact
	failed    map[string]int // queries failed, by named error
	anomalies []string       // wrong answers, hangs, unnamed errors, failed checks
	longest   time.Duration  // the longest query, answered or failed
	loads     map[string]int // loads by outcome
	acked     []uint64       // generations whose load was acknowledged
}

func (r *faultRun) anomaly(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.anomalies = append(r.anomalies, fmt.Sprintf(format, args...))
}

// A seeded schedule of faults — SIGKILL and restart, SIGSTOP and
// SIGCONT, a byte flipped in a stored page, a device's store wiped under
// a restart — runs among four device processes while two clients query
// without pause and loads publish new generations. Every answered query
// must be the exact record of the generation it reports; every failed one
// must fail with a named error (never a hang); after the faults heal,
// every replica of the last acknowledged generation must be whole and
// answer exactly on its own, and no device may keep shard databases of
// generations dropped. -faults.duration runs a longer schedule.
func TestClusterFaultSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes and injects faults")
	}
	ctx := context.Background()
	r := &faultRun{t: t, seed: *faultSeed, etcd: startEtcd(t), faults: map[string]int{}, failed: map[string]int{}, loads: map[string]int{},
		logs: &deviceLogs{w: os.Stderr}, regs: [2]*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}}
	for i := range faultDevices {
		d := &faultDevice{id: fmt.Sprintf("d%d", i), dir: filepath.Join(t.TempDir(), "store")}
		d.p = startDeviceAt(t, r.etcd, d.id, d.dir, faultScrub, r.logs)
		r.devs = append(r.devs, d)
	}
	t.Cleanup(func() {
		for _, d := range r.devs {
			if d.p != nil {
				d.p.cmd.Process.Signal(syscall.SIGCONT)
			}
		}
	})
	var err error
	r.keys, err = client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	open := func() *cluster.Client {
		c, err := cluster.Open(ctx, r.etcd.as(t, "coordinator"), r.keys, remote.WithPlaintext())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Scheme = client.SchemeBGV // as newCluster: see there
		c.ShardTimeout = 8 * time.Second
		return c
	}
	r.c = open()
	if err := r.c.RegisterMetrics(r.regs[0]); err != nil {
		t.Fatal(err)
	}
	waitDevices(t, r.c, faultDevices)
	if _, err := r.c.CreatePIR(ctx, "db", recSize, faultShards, faultReplicas); err != nil {
		t.Fatal(err)
	}
	if !r.load(ctx) {
		t.Fatal("the first load failed")
	}
	// The coordinator: repair on membership changes and reconcile every
	// 2 s (a wiped or scrubbed replica under a running device).
	coord := open()
	coord.ReconcileInterval = 2 * time.Second
	if err := coord.RegisterMetrics(r.regs[1]); err != nil {
		t.Fatal(err)
	}
	mctx, stopMaintain := context.WithCancel(ctx)
	maintained := make(chan struct{})
	go func() {
		defer close(maintained)
		coord.Maintain(mctx, nil)
	}()
	defer func() { stopMaintain(); <-maintained }()

	// Queries without pause, and loads now and then, until the faults heal.
	qctx, stopQueries := context.WithCancel(ctx)
	var workers sync.WaitGroup
	for w := range 2 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			r.query(qctx, rand.New(rand.NewPCG(r.seed, uint64(w))))
		}()
	}
	workers.Add(1)
	go func() {
		defer workers.Done()
		rng := rand.New(rand.NewPCG(r.seed, 99))
		for qctx.Err() == nil {
			select {
			case <-qctx.Done():
				return
			case <-time.After(time.Duration(3000+rng.IntN(4000)) * time.Millisecond):
			}
			r.load(qctx)
		}
	}()

	rng := rand.New(rand.NewPCG(r.seed, 0xfa))
	start := time.Now()
	for step := 0; ; step++ {
		if *faultDuration > 0 && time.Since(start) >= *faultDuration || *faultDuration == 0 && step == faultSteps {
			break
		}
		r.inject(ctx, rng)
	}
	r.heal()
	stopQueries()
	workers.Wait()
	// Every acknowledged load is queryable once the faults healed: the
	// last one, published again now (the loads during the faults may have
	// lost to the repairs), is answered exactly by every replica.
	final := false
	for range 5 {
		if final = r.load(ctx); final {
			break
		}
	}
	if !final {
		r.anomaly("no load succeeded after the faults healed")
	} else if err := r.waitConverged(ctx, true); err != nil {
		r.anomaly("after healing: %v", err)
	}
	r.report(time.Since(start))
}

// load publishes the next generation; it reports whether the load was
// acknowledged (and checks it published the generation it expected).
func (r *faultRun) load(ctx context.Context) bool {
	lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	m, err := r.c.Info(lctx, "db")
	if err != nil {
		r.loadFailed(ctx, err)
		return false
	}
	g := m.Generation + 1
	got, err := r.c.Load(lctx, "db", bytes.NewReader(faultData(r.seed, g)), dataset.FixedSize)
	if err != nil {
		r.loadFailed(ctx, err)
		return false
	}
	if got.Generation != g {
		r.anomaly("a load of generation %d published %d", g, got.Generation)
		return false
	}
	r.count(r.loads, "published")
	r.mu.Lock()
	r.acked = append(r.acked, g)
	r.mu.Unlock()
	return true
}

// loadFailed counts a failed load by its named error; a load stopped
// with the run is no failure.
func (r *faultRun) loadFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		r.count(r.loads, "stopped with the run")
		return
	}
	class := errorClass(err)
	if class == "" {
		r.anomaly("a load failed with an unnamed error: %v", err)
		return
	}
	r.count(r.loads, "failed: "+class)
}

func (r *faultRun) count(m map[string]int, key string) {
	r.mu.Lock()
	m[key]++
	r.mu.Unlock()
}

// query asks for random records until ctx ends, checking each answer
// against the generation it reports.
func (r *faultRun) query(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		i := rng.IntN(faultRecords)
		type result struct {
			a   *cluster.Answer
			err error
		}
		done := make(chan result, 1)
		start := time.Now()
		go func() {
			qctx, cancel := context.WithTimeout(ctx, queryDeadline)
			defer cancel()
			a, err := r.c.Get(qctx, "db", i)
			done <- result{a, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(queryDeadline + hangSlack):
			r.anomaly("query %d hung: no answer %v after its deadline", i, hangSlack)
			return
		}
		took := time.Since(start)
		r.mu.Lock()
		r.longest = max(r.longest, took)
		r.mu.Unlock()
		if res.err != nil {
			if ctx.Err() != nil {
				return // stopped, not failed
			}
			class := errorClass(res.err)
			if class == "" {
				r.anomaly("query %d failed with an unnamed error: %v", i, res.err)
				continue
			}
			r.count(r.failed, class)
			continue
		}
		want := faultData(r.seed, res.a.Generation)[i*recSize : (i+1)*recSize]
		if !bytes.Equal(res.a.Record, want) {
			r.anomaly("query %d answered a wrong record (generation %d, devices %v)", i, res.a.Generation, res.a.DeviceBytes)
			continue
		}
		r.mu.Lock()
		r.answered++
		r.mu.Unlock()
	}
}

// errorClass names the sentinel err wraps ("" if none): the errors a
// query or a load may fail with under faults.
func errorClass(err error) string {
	for _, e := range []struct {
		name string
		err  error
	}{
		{"deadline", context.DeadlineExceeded},
		{"no live replica", cluster.ErrNoReplica},
		{"concurrent load", cluster.ErrConcurrentLoad},
		{"claim lost", cluster.ErrClaimLost},
		{"map changed", cluster.ErrConflict},
		{"etcd", cluster.ErrEtcd},
		{"checksum", api.ErrChecksum},
		{"unavailable", api.ErrUnavailable},
		{"not found", api.ErrNotFound},
		{"permission", api.ErrPermissionDenied},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return ""
}

// inject waits a random while, then injects one fault on a random device
// and heals it after a random while: at most one device is faulted at a
// time, and a destructive fault (a wipe, a flipped page) waits until every
// replica is whole again, so that no shard loses its last good copy.
func (r *faultRun) inject(ctx context.Context, rng *rand.Rand) {
	time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
	kinds := []string{"kill", "stop", "corrupt", "wipe"}
	kind := kinds[rng.IntN(len(kinds))]
	d := r.devs[rng.IntN(len(r.devs))]
	pause := time.Duration(500+rng.IntN(2500)) * time.Millisecond
	if kind == "corrupt" || kind == "wipe" {
		if err := r.waitConverged(ctx, false); err != nil {
			r.anomaly("before a %s: %v", kind, err)
			return
		}
	}
	r.count(r.faults, kind)
	switch kind {
	case "kill":
		d.p.cmd.Process.Signal(syscall.SIGKILL)
		d.p.cmd.Wait()
		d.p = nil
		time.Sleep(pause)
		d.p = startDeviceAt(r.t, r.etcd, d.id, d.dir, faultScrub, r.logs)
	case "stop":
		d.p.cmd.Process.Signal(syscall.SIGSTOP)
		d.stopped = true
		time.Sleep(pause)
		d.p.cmd.Process.Signal(syscall.SIGCONT)
		d.stopped = false
	case "corrupt":
		if err := flipRandomPage(d.dir, rng); err != nil {
			r.anomaly("corrupt %s: %v", d.id, err)
		}
	case "wipe":
		d.p.cmd.Process.Signal(syscall.SIGKILL)
		d.p.cmd.Wait()
		d.p = nil
		if err := os.RemoveAll(d.dir); err != nil {
			r.t.Fatal(err)
		}
		time.Sleep(pause)
		d.p = startDeviceAt(r.t, r.etcd, d.id, d.dir, faultScrub, r.logs)
	}
}

// heal resumes every paused device and restarts every dead one.
func (r *faultRun) heal() {
	for _, d := range r.devs {
		if d.stopped {
			d.p.cmd.Process.Signal(syscall.SIGCONT)
			d.stopped = false
		}
		if d.p == nil {
			d.p = startDeviceAt(r.t, r.etcd, d.id, d.dir, faultScrub, r.logs)
		}
	}
}

// flipRandomPage XORs one byte of a random page's data in one of a
// store's channel files (wherever it lands: a live object's page, or a
// free one no read will see).
func flipRandomPage(dir string, rng *rand.Rand) error {
	path := filepath.Join(dir, fmt.Sprintf("ch%02d", rng.IntN(2)))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const page, slot = 4096, 4096 + 16 // the test stores' layout
	rows := fi.Size() / slot
	if rows == 0 {
		return nil
	}
	off := rng.Int64N(rows)*slot + rng.Int64N(page)
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 1 << rng.IntN(8)
	_, err = f.WriteAt(b, off)
	return err
}

// waitConverged waits (at most converge) until every shard of the
// database has all its replicas on live devices, each whole (its manifest
// and its data's bytes) after a scrub pass had time to run; with
// answers, until each replica also answers two records exactly on its
// own and no device keeps a shard database of a generation the cluster
// dropped.
func (r *faultRun) waitConverged(ctx context.Context, answers bool) error {
	time.Sleep(2 * faultScrub) // a flipped page is found by then
	deadline := time.Now().Add(converge)
	var err error
	for time.Now().Before(deadline) {
		if err = r.converged(ctx, answers); err == nil {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("not converged after %v: %w", converge, err)
}

func (r *faultRun) converged(ctx context.Context, answers bool) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	m, err := r.c.Info(ctx, "db")
	if err != nil {
		return err
	}
	devs, err := cluster.Devices(ctx, r.c.Etcd())
	if err != nil {
		return err
	}
	addr := map[string]string{}
	for _, d := range devs {
		addr[d.ID] = d.Addr
	}
	want := faultData(r.seed, m.Generation)
	for s, sh := range m.Shards {
		if len(sh.Replicas) != faultReplicas {
			return fmt.Errorf("shard %d has replicas %v", s, sh.Replicas)
		}
		for _, id := range sh.Replicas {
			a, ok := addr[id]
			if !ok {
				return fmt.Errorf("shard %d: replica %s not live", s, id)
			}
			if err := r.replicaWhole(ctx, a, m.ShardName(s), s, sh.Records, want, answers); err != nil {
				return fmt.Errorf("shard %d on %s: %w", s, id, err)
			}
		}
	}
	if !answers {
		return nil
	}
	// No shard database of a dropped generation is left anywhere: only
	// the current generation's and the one before it (kept for queries
	// in flight) may remain.
	var addrs []string
	for _, a := range addr {
		addrs = append(addrs, a)
	}
	keep := map[string]bool{}
	for s := range m.Shards {
		keep[m.ShardName(s)] = true
	}
	for addr, dbs := range shardDatabases(r.t, addrs, "db") {
		for db := range dbs {
			if !keep[db] && !strings.HasPrefix(db, fmt.Sprintf("db.g%d.", m.Generation-1)) {
				return fmt.Errorf("%s keeps %s (generation %d is current)", addr, db, m.Generation)
			}
		}
	}
	return nil
}

// replicaWhole checks one replica: its manifest read, its data objects'
// bytes adding up to it, and with answers two records answered exactly
// by this replica alone.
func (r *faultRun) replicaWhole(ctx context.Context, addr, db string, s, records int, want []byte, answers bool) error {
	cc, err := client.Open(ctx, addr, r.keys, remote.WithPlaintext())
	if err != nil {
		return err
	}
	defer cc.Close()
	in, err := cc.Info(ctx, db)
	if err != nil {
		return err
	}
	list, err := cc.Device().List(ctx, &api.ListRequest{Prefix: in.DataPrefix()})
	if err != nil {
		return err
	}
	var n int64
	for _, o := range list.Objects {
		n += o.Bytes
	}
	if n != in.Bytes {
		return fmt.Errorf("%d data bytes, the manifest says %d", n, in.Bytes)
	}
	if !answers {
		return nil
	}
	for _, li := range []int{0, records - 1} {
		rec, err := cc.Get(ctx, db, li)
		if err != nil {
			return err
		}
		i := li*faultShards + s
		if !bytes.Equal(rec, want[i*recSize:(i+1)*recSize]) {
			return fmt.Errorf("record %d answered wrong", i)
		}
	}
	return nil
}

// deviceLogs passes the devices' logs on and counts their scrubs'
// quarantines.
type deviceLogs struct {
	mu          sync.Mutex
	w           io.Writer
	quarantines atomic.Int64
}

func (l *deviceLogs) Write(p []byte) (int, error) {
	l.quarantines.Add(int64(bytes.Count(p, []byte("scrub quarantined corrupt objects"))))
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// report logs the run's figures and fails the test on any anomaly.
func (r *faultRun) report(took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := make([]string, 0, len(r.faults))
	for k := range r.faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	total := 0
	for _, k := range kinds {
		total += r.faults[k]
	}
	failed := 0
	for _, n := range r.failed {
		failed += n
	}
	counted := map[string]float64{}
	for _, reg := range r.regs {
		fams, err := reg.Gather()
		if err != nil {
			r.t.Fatal(err)
		}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				if c := m.GetCounter(); c != nil {
					counted[strings.TrimSuffix(strings.TrimPrefix(f.GetName(), "rosemary_cluster_"), "_total")] += c.GetValue()
				}
			}
		}
	}
	r.t.Logf("fault schedule (seed %d, %v): %d faults %v; queries: %d answered exactly (%.0f/min), %d failed with named errors %v; "+
		"longest query %v; loads %v (acknowledged generations %v); scrubs quarantined %d corrupt objects; "+
		"clients counted failovers %.0f, hedges %.0f, circuits opened %.0f, replicas repaired %.0f, reconciled %.0f; anomalies %d",
		r.seed, took.Round(time.Second), total, r.faults, r.answered, float64(r.answered)/took.Minutes(), failed, r.failed,
		r.longest.Round(time.Millisecond), r.loads, r.acked, r.logs.quarantines.Load(),
		counted["failovers"], counted["hedges"], counted["breaker_opens"], counted["repairs"], counted["reconciled_replicas"], len(r.anomalies))
	for _, a := range r.anomalies {
		r.t.Errorf("anomaly: %s", a)
	}
	if r.answered == 0 {
		r.t.Error("no query was answered")
	}
}
