package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// Client is a user's handle on a cluster: etcd for the maps, one client
// library connection per device for the data. Safe for concurrent use.
type Client struct {
	etcd  *clientv3.Client
	owner string // the identity etcd knows the client by
	keys  *client.Keys
	// Scheme is the PIR scheme of the databases CreatePIR makes ("": the
	// client library's default, the LWE scheme); a map records it for
	// every load.
	Scheme client.PIRScheme
	// Programs, if set, serves the vector databases (and BGV PIR ones) on
	// every device connection (client.WithPrograms; package
	// client/programs). Set it before the first call.
	Programs client.Programs
	// ShardTimeout bounds one replica's answer before the next replica of
	// its shard is tried; under a caller's deadline each replica gets at
	// most its share of what is left (attemptTimeout).
	ShardTimeout time.Duration
	// ReconcileInterval is how often Maintain also repairs every database
	// when no device came or went — what catches a replica wiped or
	// scrubbed short under a running device (0: only on membership
	// changes).
	ReconcileInterval time.Duration

	mu    sync.Mutex
	conns map[string]*deviceConn // by device address
	dial  []remote.Option        // how devices are dialled
	// seen is the last address the registry gave for each device: a
	// replica whose registration lapsed (etcd without a quorum for a
	// moment, a lease not renewed in time) is still asked, after the live
	// ones — it may well be serving.
	seen map[string]string

	metrics  *metrics
	latency  latencies // of shard answers, for hedging
	breakers breakers  // of devices that keep failing
}

// Open connects to the cluster's etcd as e says, with the user's keys;
// dial says how its devices are reached (remote.WithTLS, or WithPlaintext
// on loopback). The databases it creates belong to e's identity.
func Open(ctx context.Context, e Etcd, keys *client.Keys, dial ...remote.Option) (*Client, error) {
	id, err := e.Identity()
	if err != nil {
		return nil, err
	}
	cli, err := Connect(ctx, e)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Status(sctx, e.Endpoints[0]); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: %s unreachable: %w", ErrEtcd, e.Endpoints[0], Denied(err))
	}
	return &Client{etcd: cli, owner: id.Name, keys: keys, ShardTimeout: 2 * time.Minute, conns: map[string]*deviceConn{}, seen: map[string]string{}, dial: dial, metrics: newMetrics()}, nil
}

// Close closes every connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, dc := range c.conns {
		dc.cc.Close()
	}
	return c.etcd.Close()
}

// Etcd is the client's etcd connection.
func (c *Client) Etcd() *clientv3.Client { return c.etcd }

// ref splits a database reference: "NAME" is the caller's own database,
// "OWNER/NAME" another's (to read it, or to repair it as an admin).
func (c *Client) ref(name string) (owner, bare string) {
	if o, n, ok := strings.Cut(name, "/"); ok {
		return o, n
	}
	return c.owner, name
}

// readMap reads the map of the database name refers to (ref).
func (c *Client) readMap(ctx context.Context, name string) (*Map, int64, error) {
	owner, bare := c.ref(name)
	return readMap(ctx, c.etcd, owner, bare)
}

// liveDevices maps the live devices by id.
func (c *Client) liveDevices(ctx context.Context) (map[string]DeviceInfo, error) {
	ds, err := Devices(ctx, c.etcd)
	if err != nil {
		return nil, err
	}
	out := map[string]DeviceInfo{}
	c.mu.Lock()
	for _, d := range ds {
		out[d.ID] = d
		c.seen[d.ID] = d.Addr
	}
	c.mu.Unlock()
	return out, nil
}

// lastAddr is the address the registry last gave for device id.
func (c *Client) lastAddr(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.seen[id]
	return a, ok
}

// CreatePIR creates an empty PIR database of recordSize-byte records in
// shards shards of replicas replicas each (generation 0: nothing stored).
func (c *Client) CreatePIR(ctx context.Context, name string, recordSize, shards, replicas int) (*Map, error) {
	return c.createPIR(ctx, name, recordSize, shards, replicas, client.PIROptions{Scheme: c.Scheme})
}

// createPIR is CreatePIR on the scheme and LWE parameters opt names (its
// delta bounds do not apply: a cluster's PIR databases are reloaded
// whole).
func (c *Client) createPIR(ctx context.Context, name string, recordSize, shards, replicas int, opt client.PIROptions) (*Map, error) {
	if opt.DeltaMax != 0 || opt.CompactAt != 0 {
		return nil, fmt.Errorf("cluster: create %s: a cluster's PIR databases take no updates (no delta bounds)", name)
	}
	if opt.Scheme == "" {
		opt.Scheme = c.Scheme
	}
	if shards < 1 || replicas < 1 || recordSize < 1 {
		return nil, fmt.Errorf("cluster: create %s: %d shards × %d replicas of %d-byte records", name, shards, replicas, recordSize)
	}
	if strings.ContainsAny(name, "/.") || name == "" {
		return nil, fmt.Errorf("cluster: create: name %q (no '/' or '.')", name)
	}
	m := &Map{Header: client.Header{Name: name, Kind: client.KindPIR}, Owner: c.owner, Replicas: replicas,
		Parts: client.Parts{PIR: &client.PIRPart{RecordSize: recordSize, Scheme: opt.Scheme, LWEParams: opt.LWEParams}}, InsecureParams: opt.InsecureParams}
	if opt.Scheme != client.SchemeBGV {
		m.PIR.StoreMode(opt.LWEMode)
	}
	for s := 0; s < shards; s++ {
		m.Shards = append(m.Shards, Shard{ID: s})
	}
	return m, writeMap(ctx, c.etcd, m, 0)
}

// Info reads a database's map.
func (c *Client) Info(ctx context.Context, name string) (*Map, error) {
	m, _, err := c.readMap(ctx, name)
	return m, err
}

// Load replaces a database's records (read from r in format f): record i
// goes to shard i mod S; every replica of every shard stores generation
// g+1 as its own database, and g+1 is published by one transaction once
// all have it. Generations before g are swept afterwards (g stays for
// queries in flight). Of two concurrent loads one publishes whole; the
// other fails with ErrConcurrentLoad.
func (c *Client) Load(ctx context.Context, name string, r io.Reader, f dataset.RecordFormat) (*Map, error) {
	return c.load(ctx, name, r, f, dataset.RecordOptions{})
}

// load is Load with the reader's options (a CSV's column and header).
func (c *Client) load(ctx context.Context, name string, r io.Reader, f dataset.RecordFormat, ro dataset.RecordOptions) (*Map, error) {
	p, err := c.beginLoad(ctx, name, client.KindPIR)
	if err != nil {
		return nil, err
	}
	return c.commitLoad(ctx, p, c.writeRecords(ctx, p, r, f, ro))
}

// writeRecords writes the records of load p to its shard replicas.
func (c *Client) writeRecords(ctx context.Context, p *pendingLoad, r io.Reader, f dataset.RecordFormat, ro dataset.RecordOptions) (err error) {
	m, next := p.m, p.next
	// One pipe per shard replica, each fed to a client-library load.
	type sink struct {
		w    *io.PipeWriter
		errc chan error
	}
	sinks := make([][]sink, len(next.Shards))
	defer func() {
		for _, ks := range sinks {
			for _, k := range ks {
				if err != nil {
					k.w.CloseWithError(err)
				} else {
					k.w.Close()
				}
			}
		}
		for s, ks := range sinks {
			for _, k := range ks {
				if lerr := <-k.errc; lerr != nil && err == nil {
					err = fmt.Errorf("shard %d: %w", s, lerr)
				}
			}
		}
	}()
	// Each shard's load reads a pipe: tell it the records to expect, from
	// the input's size where it has one, so a large shard is laid out for
	// its own size.
	perShard := 0
	if n := client.InputSize(r); n > 0 && m.pir().RecordSize > 0 {
		perShard = int((n/int64(m.pir().RecordSize) + int64(len(next.Shards)) - 1) / int64(len(next.Shards)))
	}
	for s, sh := range next.Shards {
		for _, id := range sh.Replicas {
			cc, release, err := c.acquire(ctx, p.live[id].Addr)
			if err != nil {
				return err
			}
			dbName := next.ShardName(s)
			if _, err := cc.CreatePIR(ctx, dbName, m.pir().RecordSize, client.PIROptions{Scheme: client.PIRScheme(m.pir().Scheme), LWEParams: m.pir().LWEParams, InsecureParams: m.InsecureParams, LWEMode: m.pir().Mode()}); err != nil {
				release()
				return fmt.Errorf("shard %d on %s: %w", s, id, err)
			}
			pr, pw := io.Pipe()
			errc := make(chan error, 1)
			go func() {
				defer release()
				_, err := cc.Load(ctx, dbName, pr, client.LoadOptions{Records: dataset.FixedSize, ExpectedRecords: perShard})
				pr.CloseWithError(err)
				errc <- err
			}()
			sinks[s] = append(sinks[s], sink{w: pw, errc: errc})
		}
	}
	rr, err := dataset.NewRecordReader(r, f, m.pir().RecordSize, ro)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		rec, err := rr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		s := i % len(sinks)
		next.Shards[s].Records++
		for _, k := range sinks[s] {
			if _, err := k.w.Write(rec); err != nil {
				return fmt.Errorf("shard %d: %w", s, err)
			}
		}
		next.Records = i + 1
	}
}

// pendingLoad is a load between its claim and its publication.
type pendingLoad struct {
	m     *Map // the map it read
	rev   int64
	next  *Map // the map it publishes: its shards placed, its token
	live  map[string]DeviceInfo
	claim *claim
	// publish, if set, publishes next in publishLoad's stead (a
	// compaction carries the delta over in the same transaction).
	publish func(ctx context.Context) error
}

// beginLoad reads name's map, checks it is a kind database and that enough
// devices are live, claims the next generation (its fencing token) and
// returns the next generation's map with its shards placed. The caller
// ends with commitLoad, or abandonLoad after an early failure.
func (c *Client) beginLoad(ctx context.Context, name string, kind client.Kind) (*pendingLoad, error) {
	m, rev, err := c.readMap(ctx, name)
	if err != nil {
		return nil, err
	}
	if m.Owner != c.owner || m.Name != name {
		return nil, fmt.Errorf("%w: load %s: only its owner %s loads it, by its own name", ErrDenied, name, m.Owner)
	}
	if m.Kind != kind {
		hint := map[client.Kind]string{client.KindPIR: " (LoadVectors)"}[m.Kind]
		return nil, fmt.Errorf("cluster: %s is a %s database%s", name, m.Kind, hint)
	}
	live, err := c.liveDevices(ctx)
	if err != nil {
		return nil, err
	}
	if len(live) < m.Replicas {
		return nil, fmt.Errorf("cluster: load %s: %d live devices for %d replicas", name, len(live), m.Replicas)
	}
	cl, err := c.claimLoad(ctx, m.Owner, m.Name)
	if err != nil {
		return nil, err
	}
	n := *m
	n.Parts = m.Parts.Clone()
	n.Generation = m.Generation + 1
	n.Token, n.PreviousToken = cl.token, m.Token
	n.Shards = placeShards(m, live)
	return &pendingLoad{m: m, rev: rev, next: &n, live: live, claim: cl}, nil
}

// commitLoad publishes p's generation once every replica holds it (loadErr
// nil) and sweeps the generations before the one it replaces on every
// live device (that one stays for queries in flight). A load that failed,
// or lost to a concurrent one, removes what it wrote and leaves the
// current generation in place. A publish whose outcome etcd left unknown
// is settled by reading the map back; if that fails too, a later sweep
// removes what this load left.
func (c *Client) commitLoad(ctx context.Context, p *pendingLoad, loadErr error) (*Map, error) {
	defer c.endClaim(p.claim)
	if loadErr != nil {
		c.metrics.loads.WithLabelValues("failed").Inc()
		c.abandonLoad(ctx, p)
		return nil, fmt.Errorf("cluster: load %s: %w (generation %d stays)", p.m.Name, loadErr, p.m.Generation)
	}
	publish := func(ctx context.Context) error { return c.publishLoad(ctx, p.next, p.rev, p.claim) }
	if p.publish != nil {
		publish = p.publish
	}
	if err := publish(ctx); err != nil {
		if !errors.Is(err, ErrEtcd) || !c.published(ctx, p.next) {
			outcome := "failed"
			if errors.Is(err, ErrConcurrentLoad) {
				outcome = "concurrent"
			}
			c.metrics.loads.WithLabelValues(outcome).Inc()
			c.abandonLoad(ctx, p)
			return nil, err
		}
	}
	c.metrics.loads.WithLabelValues("published").Inc()
	// Best effort: what a device that does not answer now keeps is swept
	// by the coordinator (Repair) or the next load.
	if stale, err := c.staleTokens(ctx, p.m.Owner, p.m.Name); err == nil {
		c.sweep(ctx, p.m.Owner, p.m.Name, p.live, stale)
	}
	return p.next, nil
}

// abandonLoad removes the shard databases a load that will not publish
// wrote (best effort: a sweep removes what is left once its claim ends).
func (c *Client) abandonLoad(ctx context.Context, p *pendingLoad) {
	c.sweep(context.WithoutCancel(ctx), p.m.Owner, p.m.Name, p.live, func(token int64) bool { return token == p.next.Token })
}

// published reads name's map back after a publish whose outcome is
// unknown: is it next?
func (c *Client) published(ctx context.Context, next *Map) bool {
	m, _, err := readMap(ctx, c.etcd, next.Owner, next.Name)
	return err == nil && reflect.DeepEqual(m, next)
}

// placeShards puts each shard's replicas on the least-loaded live devices
// (ties by id), keeping live current replicas first.
func placeShards(m *Map, live map[string]DeviceInfo) []Shard {
	load := map[string]int{}
	for id := range live {
		load[id] = 0
	}
	out := make([]Shard, len(m.Shards))
	for s := range m.Shards {
		var reps []string
		for _, id := range m.Shards[s].Replicas {
			if _, ok := live[id]; ok && len(reps) < m.Replicas {
				reps = append(reps, id)
				load[id]++
			}
		}
		for len(reps) < m.Replicas {
			id := leastLoaded(load, reps)
			if id == "" {
				break
			}
			reps = append(reps, id)
			load[id]++
		}
		out[s] = Shard{ID: s, Replicas: reps}
	}
	return out
}

func leastLoaded(load map[string]int, exclude []string) string {
	ids := make([]string, 0, len(load))
	for id := range load {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	best := ""
	for _, id := range ids {
		skip := false
		for _, e := range exclude {
			skip = skip || e == id
		}
		if !skip && (best == "" || load[id] < load[best]) {
			best = id
		}
	}
	return best
}

// Answer is one Get's record and what it cost.
type Answer struct {
	Record     []byte
	Generation uint64
	// Bytes crossing between the client and each device it queried
	// (query up, answer down), by device id.
	DeviceBytes map[string]int64
	// PayloadBytes is the ciphertext payloads of those queries and answers
	// by device: what DeviceBytes carried, before the wire's framing.
	PayloadBytes map[string]int64
	// QueryBytes and AnswerBytes are DeviceBytes' sums up and down;
	// Measured: every device's were counted on its connection.
	QueryBytes, AnswerBytes int64
	Measured                bool
	Retries                 int // replicas that failed and were replaced
}

// Get returns record index. Every shard answers a query (the one holding
// the record for it, the others for a record of their own), so no device
// learns which shard was wanted; each shard is tried replica by replica.
func (c *Client) Get(ctx context.Context, name string, index int) (*Answer, error) {
	start := time.Now()
	m, _, err := c.readMap(ctx, name)
	if err != nil {
		return nil, err
	}
	if m.Kind != client.KindPIR {
		return nil, fmt.Errorf("cluster: get %s: %w: a %s database", name, client.ErrKind, m.Kind)
	}
	if m.Records == 0 || m.Generation == 0 {
		return nil, fmt.Errorf("cluster: get %s: %w (generation %d)", name, client.ErrEmpty, m.Generation)
	}
	if index < 0 || index >= m.Records {
		return nil, fmt.Errorf("cluster: get %s: %w: %d of %d records", name, client.ErrIndexOutOfRange, index, m.Records)
	}
	live, err := c.liveDevices(ctx)
	if err != nil {
		return nil, err
	}
	target, local := m.Locate(index)
	ans := &Answer{Generation: m.Generation, DeviceBytes: map[string]int64{}, PayloadBytes: map[string]int64{}, Measured: true}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(m.Shards))
	for s, sh := range m.Shards {
		li := min(local, sh.Records-1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, dev, retries, err := c.shardGet(ctx, m, s, li, live)
			mu.Lock()
			defer mu.Unlock()
			ans.Retries += retries
			if err != nil {
				errs[s] = err
				return
			}
			ans.DeviceBytes[dev] += a.up + a.down
			ans.PayloadBytes[dev] += a.payload
			ans.QueryBytes += a.up
			ans.AnswerBytes += a.down
			ans.Measured = ans.Measured && a.measured
			rec := a.rec
			if s == target {
				ans.Record = rec
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c.metrics.query("get", start)
	for _, b := range ans.DeviceBytes {
		c.metrics.queryBytes.Add(float64(b))
	}
	return ans, nil
}

// shardAnswer is one shard's answer: its record, the bytes up and down
// (the plaintext a host-side scan pulled counts down), the payloads.
type shardAnswer struct {
	rec               []byte
	up, down, payload int64
	measured          bool
}

// shardGet asks one replica after another for local record li of shard
// s; it returns the answer, the device that gave it and the replicas that
// failed first.
func (c *Client) shardGet(ctx context.Context, m *Map, s int, li int, live map[string]DeviceInfo) (shardAnswer, string, int, error) {
	return tryReplicas(ctx, c, m, s, live, func(ctx context.Context, cc *client.Client) (shardAnswer, error) {
		q, err := cc.GetQuery(ctx, m.ShardName(s), li)
		if err != nil {
			return shardAnswer{}, err
		}
		return shardAnswer{rec: q.Record, up: q.QueryBytes, down: q.AnswerBytes + q.PulledBytes, payload: q.PayloadBytes + q.PulledBytes,
			measured: q.Measured}, nil
	})
}

// Repair gives every shard of a database its full replication again:
// a live replica whose device holds less than the others (reconcile) is
// copied again in place; replicas on devices whose leases expired are
// replaced by the least-loaded live devices, which copy the shard from a
// surviving replica device to device; the map is updated in one
// transaction. It returns the replicas copied.
func (c *Client) Repair(ctx context.Context, name string) (int, error) {
	m, rev, err := c.readMap(ctx, name)
	if err != nil {
		return 0, err
	}
	name = m.Name // an admin repairs others' databases: "OWNER/NAME"
	live, err := c.liveDevices(ctx)
	if err != nil {
		return 0, err
	}
	// First what the devices hold against what the map says: a live
	// replica found short is copied again in place. Its failure does not
	// hold back re-replicating the shards of devices that left.
	copied, recErr := c.reconcile(ctx, m, live)
	next := *m
	next.Parts = m.Parts.Clone()
	next.Shards = placeShards(m, live)
	for s, sh := range next.Shards {
		next.Shards[s].Records = m.Shards[s].Records
		alive := 0
		for _, id := range m.Shards[s].Replicas {
			if _, ok := live[id]; ok {
				alive++
			}
		}
		if alive == 0 {
			return copied, errors.Join(recErr, fmt.Errorf("%w for shard %d of %s: its replicas %v are all gone", ErrNoReplica, s, name, m.Shards[s].Replicas))
		}
		for _, id := range sh.Replicas {
			held := false
			for _, old := range m.Shards[s].Replicas {
				held = held || old == id
			}
			if held || m.Generation == 0 {
				continue
			}
			if _, err := c.copyShard(ctx, m, s, id, m.Shards[s].Replicas, live, true); err != nil {
				return copied, errors.Join(recErr, fmt.Errorf("cluster: repair shard %d onto %s: %w", s, id, err))
			}
			copied++
			c.metrics.repairs.Inc()
		}
	}
	moved, err := c.balance(ctx, &next, live)
	copied += len(moved)
	c.metrics.repairs.Add(float64(len(moved)))
	if err != nil {
		return copied, errors.Join(recErr, err)
	}
	// An unchanged map is not written again: a periodic reconcile that
	// found nothing to do must not bump the map's revision under a
	// concurrent load's compare-and-swap.
	if !sameReplicas(m, &next) {
		if err := writeMap(ctx, c.etcd, &next, rev); err != nil {
			return copied, errors.Join(recErr, err)
		}
	}
	// The replicas moved away are unreachable now: drop them.
	for _, mv := range moved {
		if d, ok := live[mv.from]; ok {
			if cc, release, err := c.acquire(ctx, d.Addr); err == nil {
				cc.Drop(ctx, m.ShardName(mv.shard))
				release()
			}
		}
	}
	// Shard databases of neither generation kept (the current one and the
	// one before it, for queries in flight) nor a running load are garbage
	// wherever they are: on a device that was away when their generation
	// was dropped, or left by a load that crashed. Best effort: a device
	// that does not answer (dead, its lease not yet expired) is swept at
	// the next repair or load; the repair itself succeeded.
	if stale, err := c.staleTokens(ctx, m.Owner, m.Name); err == nil {
		c.sweep(ctx, m.Owner, m.Name, live, stale)
	}
	return copied, recErr
}

// sameReplicas reports whether a and b place every shard on the same
// devices, in the same order.
func sameReplicas(a, b *Map) bool {
	if len(a.Shards) != len(b.Shards) {
		return false
	}
	for s := range a.Shards {
		if !slices.Equal(a.Shards[s].Replicas, b.Shards[s].Replicas) || a.Shards[s].Records != b.Shards[s].Records {
			return false
		}
	}
	return true
}

type move struct {
	shard    int
	from, to string
}

// balance moves shard replicas from the most loaded live devices to the
// least loaded (a device that joined takes shards) until their counts
// differ by at most one; each move copies the shard device to device
// before the map changes.
func (c *Client) balance(ctx context.Context, m *Map, live map[string]DeviceInfo) ([]move, error) {
	if m.Generation == 0 {
		return nil, nil
	}
	var moved []move
	for {
		load := map[string]int{}
		for id := range live {
			load[id] = 0
		}
		for _, sh := range m.Shards {
			for _, id := range sh.Replicas {
				load[id]++
			}
		}
		ids := make([]string, 0, len(load))
		for id := range load {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool {
			if load[ids[i]] != load[ids[j]] {
				return load[ids[i]] < load[ids[j]]
			}
			return ids[i] < ids[j]
		})
		lo, hi := ids[0], ids[len(ids)-1]
		if load[hi]-load[lo] <= 1 {
			return moved, nil
		}
		done := false
		for s := range m.Shards {
			has := func(id string) int {
				for k, r := range m.Shards[s].Replicas {
					if r == id {
						return k
					}
				}
				return -1
			}
			k := has(hi)
			if k < 0 || has(lo) >= 0 {
				continue
			}
			// From the device giving the replica up, else another replica.
			sources := append([]string{hi}, m.Shards[s].Replicas...)
			if _, err := c.copyShard(ctx, m, s, lo, sources, live, true); err != nil {
				return moved, fmt.Errorf("cluster: move shard %d to %s: %w", s, lo, err)
			}
			m.Shards[s].Replicas[k] = lo
			moved = append(moved, move{shard: s, from: hi, to: lo})
			done = true
			break
		}
		if !done {
			return moved, nil
		}
	}
}

// Maintain repairs every database whenever the set of live devices changes
// (a lease expires, a device joins), and every ReconcileInterval if set,
// until ctx ends: re-replication, reconciliation and rebalancing without
// an operator. A round in which some repair failed (a source replica busy
// or gone, a copy cut off) is tried again after a backoff (retryBackoff)
// with no event needed: the event that called for it will not come again.
// report, if set, hears what it did (db "" for etcd's own errors, which
// end a round but not Maintain). It returns when ctx ends.
func (c *Client) Maintain(ctx context.Context, report func(db string, copied int, err error)) error {
	watch := c.etcd.Watch(ctx, devicesPrefix, clientv3.WithPrefix())
	var tick <-chan time.Time
	if c.ReconcileInterval > 0 {
		t := time.NewTicker(c.ReconcileInterval)
		defer t.Stop()
		tick = t.C
	}
	var (
		retry   <-chan time.Time
		backoff retryBackoff
	)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		case <-retry:
		case resp, ok := <-watch:
			if ctx.Err() != nil {
				return nil
			}
			if !ok || resp.Err() != nil {
				// A watch etcd ended (its history compacted, a member
				// lost): watch again, and repair now for what it missed.
				err := fmt.Errorf("%w: watch devices: the watch ended", ErrEtcd)
				if ok {
					err = fmt.Errorf("%w: watch devices: %w", ErrEtcd, resp.Err())
				}
				if report != nil {
					report("", 0, err)
				}
				watch = c.etcd.Watch(ctx, devicesPrefix, clientv3.WithPrefix())
			}
		}
		dbs, err := c.etcd.Get(ctx, dbsPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if report != nil {
				report("", 0, fmt.Errorf("%w: list databases: %w", ErrEtcd, err))
			}
			retry = time.After(backoff.next(true))
			continue
		}
		failed := false
		for _, kv := range dbs.Kvs {
			name := strings.TrimPrefix(string(kv.Key), dbsPrefix)
			copied, err := c.Repair(ctx, name)
			if errors.Is(err, ErrConflict) {
				copied, err = c.Repair(ctx, name) // the map moved meanwhile: once more
			}
			failed = failed || (err != nil && ctx.Err() == nil)
			if report != nil {
				report(name, copied, err)
			}
		}
		retry = nil
		if wait := backoff.next(failed); wait > 0 {
			retry = time.After(wait)
		}
	}
}

// retryBackoff is Maintain's wait before it tries a failed round again:
// maintainRetry after the first failure, doubling to maintainRetryMax
// while rounds keep failing, none after a round that did not fail.
type retryBackoff struct{ last time.Duration }

// next is the wait after a round that failed or not (0: no retry).
func (b *retryBackoff) next(failed bool) time.Duration {
	if !failed {
		b.last = 0
		return 0
	}
	b.last = min(max(2*b.last, maintainRetry), maintainRetryMax)
	return b.last
}

// Maintain's waits before it tries a failed round again (retryBackoff).
const (
	maintainRetry    = time.Second
	maintainRetryMax = 30 * time.Second
)
