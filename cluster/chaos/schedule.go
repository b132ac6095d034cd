package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/rosemary-fhe/rosemary/cluster"
)

// converge bounds waiting for the cluster to heal: before a destructive
// fault, and at the end.
const converge = 3 * time.Minute

// schedule runs the clients and the fault tracks, heals, and checks the
// end state.
func (r *run) schedule(ctx context.Context) (*Report, error) {
	cfg := r.cfg
	coord, err := r.asOpen(ctx, "coordinator")
	if err != nil {
		return nil, err
	}
	defer coord.Close()
	coord.ReconcileInterval = cfg.Reconcile
	mctx, stopMaintain := context.WithCancel(ctx)
	maintained := make(chan struct{})
	go func() {
		defer close(maintained)
		coord.Maintain(mctx, nil)
	}()
	defer func() { stopMaintain(); <-maintained }()

	// Clients: queries without pause, a load every few seconds.
	qctx, stopClients := context.WithCancel(ctx)
	var clients sync.WaitGroup
	for w := range cfg.QueryClients {
		c, err := r.open(ctx, r.user)
		if err != nil {
			stopClients()
			return nil, err
		}
		defer c.Close()
		clients.Add(1)
		go func() {
			defer clients.Done()
			r.query(qctx, c, rand.New(rand.NewPCG(cfg.Seed, uint64(w))))
		}()
	}
	clients.Add(1)
	go func() {
		defer clients.Done()
		rng := rand.New(rand.NewPCG(cfg.Seed, 99))
		for sleep(qctx, time.Duration(3000+rng.IntN(4000))*time.Millisecond) {
			r.load(qctx, "loader")
		}
	}()
	stopProgress := r.progress(qctx)

	start := time.Now()
	var faults sync.WaitGroup
	for t, kinds := range tracks {
		faults.Add(1)
		go func() {
			defer faults.Done()
			r.track(ctx, kinds, rand.New(rand.NewPCG(cfg.Seed, 0xfa+uint64(t))), start)
		}()
	}
	faults.Wait()
	r.heal(ctx)
	stopClients()
	clients.Wait()
	stopProgress()

	// Every acknowledged load is queryable once the faults healed: the
	// last one, published now, is answered exactly by every replica alone,
	// and no device keeps an older generation but the one before it.
	var final error
	for range 5 {
		if final = r.load(ctx, "final"); final == nil {
			break
		}
	}
	if final != nil {
		r.anomaly("no load succeeded after the faults healed: %v", final)
	} else if err := r.waitConverged(ctx, true); err != nil {
		r.anomaly("after healing: %v", err)
	}
	r.mu.Lock()
	r.rep.Seconds = time.Since(start).Seconds()
	r.rep.QueriesPerMin = float64(r.rep.Queries) / time.Since(start).Minutes()
	r.mu.Unlock()
	if m, err := r.c.Info(ctx, dbName); err == nil {
		r.rep.Generation = m.Generation
		r.mu.Lock()
		for _, a := range r.history.attempts {
			if a.generation > m.Generation {
				r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf("load %d was acknowledged as generation %d; the database is at %d", a.id, a.generation, m.Generation))
			}
		}
		r.mu.Unlock()
	}
	r.rep.Quarantines = r.quarantines.Load()
	for _, d := range r.devs {
		r.scrapeDevice(ctx, d)
	}
	r.gather()
	if r.rep.Queries == 0 {
		r.anomaly("no query was answered")
	}
	rep := r.rep
	return &rep, nil
}

// asOpen opens a cluster client as party name.
func (r *run) asOpen(ctx context.Context, name string) (*cluster.Client, error) {
	e, err := r.as(name)
	if err != nil {
		return nil, err
	}
	return r.open(ctx, e)
}

// track runs rounds of kinds (each round its kinds in a seeded order),
// spread over the run's duration when it has one.
func (r *run) track(ctx context.Context, kinds []Kind, rng *rand.Rand, start time.Time) {
	cfg := r.cfg
	var avail []Kind
	for _, k := range kinds {
		if _, no := r.rep.Skipped[k]; !no {
			avail = append(avail, k)
		}
	}
	kinds = avail
	if len(kinds) == 0 {
		return
	}
	for round := 0; cfg.Duration == 0 && round < cfg.Rounds || cfg.Duration > 0; round++ {
		if cfg.Duration > 0 {
			if time.Since(start) >= cfg.Duration {
				return
			}
			// Pace: round k starts no earlier than k/Rounds of the way.
			slot := start.Add(cfg.Duration * time.Duration(round) / time.Duration(cfg.Rounds))
			if !sleep(ctx, time.Until(slot)) {
				return
			}
		}
		for _, i := range rng.Perm(len(kinds)) {
			if !sleep(ctx, time.Duration(200+rng.IntN(800))*time.Millisecond) {
				return
			}
			r.inject(ctx, kinds[i], rng)
		}
	}
}

// inject injects one fault of kind and heals it after a random while.
func (r *run) inject(ctx context.Context, kind Kind, rng *rand.Rand) {
	hold := time.Duration(500+rng.IntN(2500)) * time.Millisecond
	switch kind {
	case Kill, Pause, Corrupt, Wipe, FullDisk:
		d := r.pickDevice(rng)
		if d == nil {
			r.anomaly("no device free for a %s", kind)
			return
		}
		defer d.fault.Unlock()
		if kind == Corrupt || kind == Wipe {
			// No shard may lose its last good copy: a destructive fault
			// waits until every replica is whole again.
			if err := r.waitConverged(ctx, false); err != nil {
				r.anomaly("before a %s: %v", kind, err)
				return
			}
		}
		r.countFault(kind)
		switch kind {
		case Kill:
			r.scrapeDevice(ctx, d)
			d.kill()
			sleep(ctx, hold)
			r.restart(d)
		case Pause:
			d.signal(syscall.SIGSTOP)
			sleep(ctx, hold)
			d.signal(syscall.SIGCONT)
		case Corrupt:
			if err := d.flipPage(rng.Int64N); err != nil {
				r.anomaly("corrupt %s: %v", d.spec.ID, err)
			}
		case Wipe:
			r.scrapeDevice(ctx, d)
			d.kill()
			if err := os.RemoveAll(d.spec.Store); err != nil {
				r.anomaly("wipe %s: %v", d.spec.ID, err)
			}
			sleep(ctx, hold)
			r.restart(d)
		case FullDisk:
			if _, err := d.fill(); err != nil {
				r.anomaly("fill %s's disk: %v", d.spec.ID, err)
			}
			sleep(ctx, hold)
			if err := d.free(); err != nil {
				r.anomaly("free %s's disk: %v", d.spec.ID, err)
			}
		}
	case EtcdMember, EtcdQuorum:
		ms := r.etcd.Members()
		n := 1
		// A member is out 0.3–2 s (restarting it and its rejoining take
		// about as long again).
		hold = time.Duration(300+rng.IntN(1700)) * time.Millisecond
		if kind == EtcdQuorum {
			n = len(ms)/2 + 1
			hold = r.cfg.QuorumLoss/4 + time.Duration(rng.Int64N(int64(r.cfg.QuorumLoss*3/4)+1))
		}
		r.countFault(kind)
		r.lastEtcdFault.Store(time.Now().Add(time.Hour).UnixNano()) // "now" while it lasts
		stopped := rng.Perm(len(ms))[:n]
		for _, i := range stopped {
			ms[i].Stop()
		}
		sleep(ctx, hold)
		for _, i := range stopped {
			if err := ms[i].Start(); err != nil {
				r.anomaly("restart etcd member %s: %v", ms[i].Name, err)
			}
		}
		for _, i := range stopped {
			if err := ms[i].WaitReady(ctx, time.Minute); err != nil {
				r.anomaly("etcd member %s did not rejoin: %v", ms[i].Name, err)
			}
		}
		r.lastEtcdFault.Store(time.Now().UnixNano())
	case ConcurrentLoads:
		r.countFault(kind)
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.load(ctx, "concurrent")
			}()
		}
		wg.Wait()
	}
}

// pickDevice takes the fault lock of a random device no other fault holds
// (nil if every one is taken).
func (r *run) pickDevice(rng *rand.Rand) *device {
	for _, i := range rng.Perm(len(r.devs)) {
		if r.devs[i].fault.TryLock() {
			return r.devs[i]
		}
	}
	return nil
}

func (r *run) countFault(k Kind) {
	r.mu.Lock()
	r.rep.Faults[k]++
	r.mu.Unlock()
}

// restart starts d again, trying until it listens (a device that cannot
// reach etcd at its start ends; watch starts it again too).
func (r *run) restart(d *device) {
	for attempt := 0; ; attempt++ {
		err := r.startDevice(d)
		if err == nil {
			return
		}
		if attempt == 10 {
			r.anomaly("device %s does not start again: %v", d.spec.ID, err)
			return
		}
		time.Sleep(time.Second)
	}
}

// heal resumes paused devices, starts ended ones and frees full disks
// (every fault heals itself; this is for a run stopped midway).
func (r *run) heal(ctx context.Context) {
	for _, d := range r.devs {
		d.signal(syscall.SIGCONT)
		d.mu.Lock()
		down := d.cmd == nil
		d.mu.Unlock()
		if down {
			r.restart(d)
		}
		if d.limitedMount {
			d.free()
		}
	}
	for _, m := range r.etcd.Members() {
		if !m.Running() {
			m.Start()
			m.WaitReady(ctx, time.Minute)
		}
	}
}

// sleep sleeps d unless ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// progress prints a line every ProgressEvery until the returned stop.
func (r *run) progress(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		for sleep(ctx, r.cfg.ProgressEvery) {
			r.mu.Lock()
			total := 0
			for _, n := range r.rep.Faults {
				total += n
			}
			fmt.Fprintf(r.cfg.Log, "chaos: %v: %d queries answered, %d faults %v, %d anomalies\n",
				time.Since(start).Round(time.Second), r.rep.Queries, total, r.rep.Faults, len(r.rep.Anomalies))
			r.mu.Unlock()
		}
	}()
	return func() { cancel(); <-done }
}
