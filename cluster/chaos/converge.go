package chaos

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/programs"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// waitConverged waits (at most converge) until every shard of the
// database has all its replicas on live devices, each whole (its manifest
// and its data's bytes) after a scrub pass had time to run; with
// answers, until each replica also answers two records exactly on its own
// and no device keeps a shard database of a generation the cluster
// dropped.
func (r *run) waitConverged(ctx context.Context, answers bool) error {
	time.Sleep(2 * r.cfg.Scrub) // a flipped page is found by then
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

func (r *run) converged(ctx context.Context, answers bool) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	m, err := r.c.Info(ctx, dbName)
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
	r.mu.Lock()
	var want []byte
	for _, a := range r.history.attempts {
		if a.generation == m.Generation {
			want = a.data
		}
	}
	r.mu.Unlock()
	for s, sh := range m.Shards {
		if len(sh.Replicas) != r.cfg.Replicas {
			return fmt.Errorf("shard %d has replicas %v", s, sh.Replicas)
		}
		for _, id := range sh.Replicas {
			a, ok := addr[id]
			if !ok {
				return fmt.Errorf("shard %d: replica %s not live", s, id)
			}
			if err := r.replicaWhole(ctx, a, m, s, want, answers); err != nil {
				return fmt.Errorf("shard %d on %s: %w", s, id, err)
			}
		}
	}
	if !answers {
		return nil
	}
	// Only the current generation's shard databases and the previous
	// one's (kept for queries in flight) may remain.
	keep := map[string]bool{}
	for s := range m.Shards {
		keep[m.ShardName(s)] = true
	}
	prev := fmt.Sprintf("%s.g%d.", dbName, m.Generation-1)
	for id, a := range addr {
		dbs, err := r.shardDatabases(ctx, a)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		for _, db := range dbs {
			if !keep[db] && !strings.HasPrefix(db, prev) {
				return fmt.Errorf("%s keeps %s (generation %d is current)", id, db, m.Generation)
			}
		}
	}
	return nil
}

// replicaWhole checks shard s's replica at addr: its manifest read, its
// data objects' bytes adding up to it, and with answers its first and last
// records answered exactly by this replica alone (want: the generation's
// records; nil if the run does not know them, which is an error).
func (r *run) replicaWhole(ctx context.Context, addr string, m *cluster.Map, s int, want []byte, answers bool) error {
	cc, err := client.Open(ctx, addr, r.keys, r.dial...)
	if cc != nil {
		cc.WithPrograms(programs.New())
	}
	if err != nil {
		return err
	}
	defer cc.Close()
	db := m.ShardName(s)
	in, err := cc.Info(ctx, db)
	if err != nil {
		return err
	}
	list, err := cc.Device().List(ctx, &devicepb.ListRequest{Prefix: in.DataPrefix()})
	if err != nil {
		return err
	}
	var n int64
	for _, o := range list.Objects {
		n += int64(o.Bytes)
	}
	if n != in.Bytes {
		return fmt.Errorf("%d data bytes, the manifest says %d", n, in.Bytes)
	}
	if !answers {
		return nil
	}
	if want == nil {
		return fmt.Errorf("generation %d was published by no load the run acknowledged", m.Generation)
	}
	size := r.cfg.RecordSize
	for _, li := range []int{0, m.Shards[s].Records - 1} {
		rec, err := cc.Get(ctx, db, li)
		if err != nil {
			return err
		}
		i := li*len(m.Shards) + s
		if !bytes.Equal(rec, want[i*size:(i+1)*size]) {
			return fmt.Errorf("record %d answered wrong", i)
		}
	}
	return nil
}

// shardDatabases lists the databases of the run's database a device
// holds.
func (r *run) shardDatabases(ctx context.Context, addr string) ([]string, error) {
	cc, err := client.Open(ctx, addr, r.keys, r.dial...)
	if cc != nil {
		cc.WithPrograms(programs.New())
	}
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	list, err := cc.Device().List(ctx, &devicepb.ListRequest{Prefix: dbName + ".g"})
	if err != nil {
		return nil, err
	}
	if list.Truncated {
		return nil, fmt.Errorf("list truncated")
	}
	seen := map[string]bool{}
	var dbs []string
	for _, o := range list.Objects {
		db, _, _ := strings.Cut(o.Name, "/")
		if !seen[db] {
			seen[db] = true
			dbs = append(dbs, db)
		}
	}
	return dbs, nil
}
