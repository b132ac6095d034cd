package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/cluster/local"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Config says what Run runs.
type Config struct {
	Dir         string // everything of the run: certificates, stores, etcd's data, logs
	Devices     int    // device processes (≥ Replicas + 1)
	EtcdMembers int    // etcd members (odd)
	// Duration is how long faults are injected; each track paces its
	// Rounds over it. 0: each track runs Rounds rounds without pause.
	Duration time.Duration
	Rounds   int // rounds per track (a round: one fault of each of the track's kinds)
	Seed     uint64

	Shards, Replicas    int
	Records, RecordSize int
	Scheme              client.PIRScheme // the shards' PIR scheme ("": the default)
	QueryClients        int              // clients querying without pause
	QueryDeadline       time.Duration    // each query's deadline
	ShardTimeout        time.Duration    // one replica's answer before the next is tried
	Scrub, Reconcile    time.Duration    // the devices' scrub and the coordinator's reconcile intervals
	QuorumLoss          time.Duration    // the longest etcd stays without quorum
	DiskBytes           int64            // each device's filesystem (a tmpfs; 0: none, no full-disk faults)
	PlaintextDevices    bool             // devices serve plaintext on loopback (else mutual TLS)
	DeviceMetrics       bool             // devices serve /metrics (DeviceSpec.Metrics), summed in the report
	Device              func(DeviceSpec) *exec.Cmd
	// EtcdMember runs each etcd member in a process of its own, so that a
	// stopped member is killed (a crash); nil: members in this process,
	// stopped by a graceful close.
	EtcdMember    local.MemberSpawner
	Log           io.Writer // progress lines (nil: none)
	ProgressEvery time.Duration
}

// Defaults fills what c leaves zero.
func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Devices, 5)
	def(&c.EtcdMembers, 3)
	def(&c.Rounds, 1)
	def(&c.Shards, 2)
	def(&c.Replicas, 2)
	def(&c.Records, 512)
	def(&c.RecordSize, 256)
	def(&c.QueryClients, 2)
	dur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	dur(&c.QueryDeadline, 20*time.Second)
	dur(&c.ShardTimeout, 8*time.Second)
	dur(&c.Scrub, time.Second)
	dur(&c.Reconcile, 2*time.Second)
	dur(&c.QuorumLoss, 2*time.Second)
	dur(&c.ProgressEvery, 30*time.Second)
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Report is what a run saw.
type Report struct {
	Seed          uint64             `json:"seed"`
	Seconds       float64            `json:"seconds"` // from the first fault to the end of the checks
	Queries       int                `json:"queries"` // answered, each checked exact
	QueriesPerMin float64            `json:"queries_per_min"`
	Failed        map[string]int     `json:"failed_queries"` // by named error
	Faults        map[Kind]int       `json:"faults"`
	Skipped       map[Kind]string    `json:"skipped_faults,omitempty"` // kinds that could not be injected here, and why
	Anomalies     []string           `json:"anomalies"`
	LongestQueryS float64            `json:"longest_query_s"`
	Loads         map[string]int     `json:"loads"` // by outcome
	Generation    uint64             `json:"final_generation"`
	Quarantines   int64              `json:"scrub_quarantines"`
	Counters      map[string]float64 `json:"counters"` // the clients' and the coordinator's Prometheus counters
	// DeviceCounters are the devices' Prometheus counters summed (each
	// device read before every kill and at the end; DeviceMetrics).
	DeviceCounters map[string]float64 `json:"device_counters,omitempty"`

	DeviceExitsNearEtcdFaults int `json:"device_exits_near_etcd_faults"`
}

// run is one Run.
type run struct {
	cfg  Config
	pki  string
	etcd *local.EtcdCluster
	devs []*device
	keys *client.Keys
	user cluster.Etcd // the database's owner, who loads and queries
	dial []remote.Option
	c    *cluster.Client // the loads' client
	regs []*prometheus.Registry

	ending        atomic.Bool
	quarantines   atomic.Int64
	lastEtcdFault atomic.Int64 // unix nanoseconds the last etcd fault ended (or now while one lasts)

	mu      sync.Mutex
	rep     Report
	history history
}

const dbName = "chaos"

// Run runs a cluster under cfg's faults and checks it (see the package
// comment). The error is for a run that could not be set up; what went
// wrong under the faults is in Report.Anomalies.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Device == nil {
		return nil, fmt.Errorf("chaos: no device command")
	}
	if cfg.Devices < cfg.Replicas+1 {
		return nil, fmt.Errorf("chaos: %d devices for %d replicas: a fault must leave a device to repair onto", cfg.Devices, cfg.Replicas)
	}
	r := &run{cfg: cfg, rep: Report{Seed: cfg.Seed, Anomalies: []string{}, Failed: map[string]int{}, Faults: map[Kind]int{}, Skipped: map[Kind]string{}, Loads: map[string]int{}, Counters: map[string]float64{}, DeviceCounters: map[string]float64{}}}
	for _, k := range Kinds() {
		r.rep.Faults[k] = 0
	}
	defer r.teardown()
	if err := r.setUp(ctx); err != nil {
		return nil, err
	}
	return r.schedule(ctx)
}

// setUp makes the certificates, starts etcd and the devices, and creates
// and loads the database.
func (r *run) setUp(ctx context.Context) error {
	cfg := r.cfg
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return err
	}
	r.pki = filepath.Join(cfg.Dir, "certs")
	if err := certs.Init(r.pki); err != nil {
		return err
	}
	parties := map[string]certs.Role{"etcd": certs.RoleServer, "coordinator": certs.RoleAdmin, "owner": certs.RoleUser}
	var ids []string
	for i := range cfg.Devices {
		ids = append(ids, fmt.Sprintf("d%d", i))
		parties[ids[i]] = certs.RoleDevice
	}
	for name, role := range parties {
		if err := certs.Issue(r.pki, name, role, nil); err != nil {
			return err
		}
	}
	var err error
	spawn := cfg.EtcdMember
	if spawn != nil {
		spawn = func(args []string) *exec.Cmd {
			cmd := cfg.EtcdMember(args)
			dieWithParent(cmd)
			return cmd
		}
	}
	r.etcd, err = local.StartEtcdCluster(ctx, filepath.Join(cfg.Dir, "etcd"), cfg.EtcdMembers, certs.InDir(r.pki, "etcd"), spawn)
	if err != nil {
		return err
	}
	admin, err := r.as("coordinator")
	if err != nil {
		return err
	}
	if err := local.Authorize(ctx, admin, ids); err != nil {
		return err
	}
	acli, err := cluster.Connect(ctx, admin)
	if err != nil {
		return err
	}
	err = cluster.AddUser(ctx, acli, certs.Identity{Name: "owner", Role: certs.RoleUser})
	acli.Close()
	if err != nil {
		return err
	}
	if r.user, err = r.as("owner"); err != nil {
		return err
	}
	r.dial = []remote.Option{remote.WithPlaintext()}
	if !cfg.PlaintextDevices {
		tlsCfg, err := certs.ClientConfig(certs.InDir(r.pki, "owner"))
		if err != nil {
			return err
		}
		r.dial = []remote.Option{remote.WithTLS(tlsCfg)}
	}
	if err := r.startDevices(ids); err != nil {
		return err
	}
	if r.keys, err = client.NewKeys(filepath.Join(cfg.Dir, "keys")); err != nil {
		return err
	}
	if r.c, err = r.open(ctx, r.user); err != nil {
		return err
	}
	if err := r.waitDevices(ctx, cfg.Devices); err != nil {
		return err
	}
	r.c.Scheme = cfg.Scheme
	if _, err := r.c.CreatePIR(ctx, dbName, cfg.RecordSize, cfg.Shards, cfg.Replicas); err != nil {
		return err
	}
	if err := r.load(ctx, "first"); err != nil {
		return fmt.Errorf("chaos: the first load: %w", err)
	}
	return nil
}

// as is how party name reaches etcd.
func (r *run) as(name string) (cluster.Etcd, error) {
	tlsCfg, err := certs.ClientConfig(certs.InDir(r.pki, name))
	if err != nil {
		return cluster.Etcd{}, err
	}
	return cluster.Etcd{Endpoints: r.etcd.Endpoints(), TLS: tlsCfg}, nil
}

// open is a cluster client of party e whose metrics the report gathers.
func (r *run) open(ctx context.Context, e cluster.Etcd) (*cluster.Client, error) {
	dial := r.dial
	if !r.cfg.PlaintextDevices {
		tlsCfg := e.TLS.Clone()
		dial = []remote.Option{remote.WithTLS(tlsCfg)}
	}
	c, err := cluster.Open(ctx, e, r.keys, dial...)
	if err != nil {
		return nil, err
	}
	c.ShardTimeout = r.cfg.ShardTimeout
	c.Programs = programs.New() // the shards may be BGV PIR (Config.Scheme)
	reg := prometheus.NewRegistry()
	if err := c.RegisterMetrics(reg); err != nil {
		c.Close()
		return nil, err
	}
	r.regs = append(r.regs, reg)
	return c, nil
}

// startDevices mounts each device's filesystem (when it can) and starts
// its process.
func (r *run) startDevices(ids []string) error {
	logs := filepath.Join(r.cfg.Dir, "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return err
	}
	var maddrs []string
	if r.cfg.DeviceMetrics {
		var err error
		if maddrs, err = metricsAddrs(len(ids)); err != nil {
			return err
		}
	}
	for i, id := range ids {
		d := &device{dir: filepath.Join(r.cfg.Dir, id)}
		if r.cfg.DiskBytes > 0 {
			if err := mountLimited(d.dir, r.cfg.DiskBytes); err != nil {
				r.rep.Skipped[FullDisk] = err.Error()
			} else {
				d.limitedMount = true
			}
		} else {
			r.rep.Skipped[FullDisk] = "no size-limited filesystem (DiskBytes 0)"
		}
		d.spec = DeviceSpec{ID: id, Store: filepath.Join(d.dir, "store"), Etcd: r.etcd.Endpoints(), PKI: r.pki, Scrub: r.cfg.Scrub, Plaintext: r.cfg.PlaintextDevices}
		if maddrs != nil {
			d.spec.Metrics = maddrs[i]
		}
		f, err := os.OpenFile(filepath.Join(logs, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		d.log = &deviceLog{path: f.Name(), f: f, quarantines: &r.quarantines}
		r.devs = append(r.devs, d)
		if err := r.startDevice(d); err != nil {
			return err
		}
	}
	if len(r.rep.Skipped) > 0 {
		for _, d := range r.devs {
			if d.limitedMount {
				unmount(d.dir)
				d.limitedMount = false
			}
		}
	}
	return nil
}

// waitDevices waits until n devices are registered.
func (r *run) waitDevices(ctx context.Context, n int) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ds, err := cluster.Devices(ctx, r.c.Etcd())
		if err == nil && len(ds) == n {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("chaos: %d devices did not register within a minute", n)
}

// teardown stops everything and unmounts the devices' filesystems.
func (r *run) teardown() {
	r.ending.Store(true)
	var wg sync.WaitGroup
	for _, d := range r.devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.stop(10 * time.Second)
			d.log.f.Close()
		}()
	}
	wg.Wait()
	if r.c != nil {
		r.c.Close()
	}
	if r.etcd != nil {
		r.etcd.Close()
	}
	for _, d := range r.devs {
		if d.limitedMount {
			unmount(d.dir)
		}
	}
}

func (r *run) anomaly(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf(format, args...))
}

func (r *run) count(n *int) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

func (r *run) countIn(m map[string]int, key string) {
	r.mu.Lock()
	m[key]++
	r.mu.Unlock()
}

func (r *run) etcdFaultedWithin(d time.Duration) bool {
	return time.Since(time.Unix(0, r.lastEtcdFault.Load())) < d
}

// gather adds the clients' Prometheus counters to the report.
func (r *run) gather() {
	for _, reg := range r.regs {
		fams, err := reg.Gather()
		if err != nil {
			r.anomaly("metrics: %v", err)
			continue
		}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				c := m.GetCounter()
				if c == nil {
					continue
				}
				name := strings.TrimSuffix(strings.TrimPrefix(f.GetName(), "rosemary_cluster_"), "_total")
				for _, l := range m.GetLabel() {
					name += "." + l.GetValue()
				}
				r.rep.Counters[name] += c.GetValue()
			}
		}
	}
}

// Summary is the report in a few lines.
func (rep *Report) Summary() string {
	var b strings.Builder
	total := 0
	var kinds []string
	for _, k := range Kinds() {
		total += rep.Faults[k]
		kinds = append(kinds, fmt.Sprintf("%s %d", k, rep.Faults[k]))
	}
	fmt.Fprintf(&b, "chaos (seed %d, %.0f s): %d faults: %s\n", rep.Seed, rep.Seconds, total, strings.Join(kinds, ", "))
	for k, why := range rep.Skipped {
		fmt.Fprintf(&b, "  not injected: %s: %s\n", k, why)
	}
	failed := 0
	for _, n := range rep.Failed {
		failed += n
	}
	fmt.Fprintf(&b, "queries: %d answered exactly (%.0f/min), %d failed with named errors %v; longest query %.2f s\n",
		rep.Queries, rep.QueriesPerMin, failed, rep.Failed, rep.LongestQueryS)
	fmt.Fprintf(&b, "loads: %v; final generation %d; scrubs quarantined %d corrupt objects; devices that ended near an etcd fault and were restarted: %d\n",
		rep.Loads, rep.Generation, rep.Quarantines, rep.DeviceExitsNearEtcdFaults)
	var names []string
	for n := range rep.Counters {
		names = append(names, n)
	}
	sort.Strings(names)
	var cs []string
	for _, n := range names {
		if v := rep.Counters[n]; v != 0 {
			cs = append(cs, fmt.Sprintf("%s %.0f", n, v))
		}
	}
	fmt.Fprintf(&b, "metrics: %s\n", strings.Join(cs, ", "))
	if len(rep.DeviceCounters) > 0 {
		var ds []string
		for _, n := range deviceCounters {
			n = strings.TrimSuffix(strings.TrimPrefix(n, "rosemary_device_"), "_total")
			ds = append(ds, fmt.Sprintf("%s %.0f", n, rep.DeviceCounters[n]))
		}
		fmt.Fprintf(&b, "devices (summed; each read before every kill and at the end): %s\n", strings.Join(ds, ", "))
	}
	fmt.Fprintf(&b, "anomalies: %d\n", len(rep.Anomalies))
	for _, a := range rep.Anomalies {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	return b.String()
}
