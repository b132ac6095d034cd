package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/cluster"
)

// barrierReader holds its first Read until every reader of its group has
// been read once: loads that read them have all claimed their generation
// before any writes a record.
type barrierReader struct {
	r     io.Reader
	once  sync.Once
	group *sync.WaitGroup
}

func (b *barrierReader) Read(p []byte) (int, error) {
	b.once.Do(func() {
		b.group.Done()
		b.group.Wait()
	})
	return b.r.Read(p)
}

// Two loads of one database with different data, run at once: one
// publishes, whole; the other fails with ErrConcurrentLoad and leaves
// nothing behind; every record of the published generation is the
// winner's.
func TestClusterConcurrentLoadsFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, _, addrs := newGatedCluster(t, 2)
	const n = 16
	if _, err := c.CreatePIR(ctx, "db", recSize, 2, 2); err != nil {
		t.Fatal(err)
	}
	data := [2][]byte{records(51, n, recSize), records(52, n, recSize)}
	var group sync.WaitGroup
	group.Add(2)
	var maps [2]*cluster.Map
	var errs [2]error
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			maps[k], errs[k] = c.Load(ctx, "db", &barrierReader{r: bytes.NewReader(data[k]), group: &group}, dataset.FixedSize)
		}()
	}
	wg.Wait()
	winner := -1
	for k := range 2 {
		switch {
		case errs[k] == nil && winner < 0:
			winner = k
		case errs[k] == nil:
			t.Fatal("both loads published")
		case !errors.Is(errs[k], cluster.ErrConcurrentLoad) || !errors.Is(errs[k], cluster.ErrConflict):
			t.Fatalf("load %d: %v, want ErrConcurrentLoad", k, errs[k])
		}
	}
	if winner < 0 {
		t.Fatalf("no load published: %v; %v", errs[0], errs[1])
	}
	m, err := c.Info(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if m.Generation != 1 || m.Token != maps[winner].Token || m.Records != n {
		t.Fatalf("published %+v, the winner's is %+v", m, maps[winner])
	}
	for i := range n {
		a, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if a.Generation != 1 || !bytes.Equal(a.Record, data[winner][i*recSize:(i+1)*recSize]) {
			t.Fatalf("record %d of generation %d is not load %d's", i, a.Generation, winner)
		}
	}
	// The loser removed its shard databases: the devices hold the
	// winner's, as mapped, and nothing else.
	addrOf := map[string]string{"d0": addrs[0], "d1": addrs[1]}
	want := map[string]map[string]bool{}
	wantShards(m, addrOf, want)
	got := shardDatabases(t, addrs, "db")
	for _, addr := range addrs {
		if !sameSet(got[addr], want[addr]) {
			t.Fatalf("device %s holds %v, want %v", addr, keysOf(got[addr]), keysOf(want[addr]))
		}
	}
}

// onFirstRead runs do before its first Read.
type onFirstRead struct {
	r    io.Reader
	once sync.Once
	do   func()
}

func (o *onFirstRead) Read(p []byte) (int, error) {
	o.once.Do(o.do)
	return o.r.Read(p)
}

// A repair that re-places the current generation's replicas while a load
// writes the next one changes the map but not its generation: the load
// publishes over it (no ErrConcurrentLoad), with its own shards, and the
// repair's placement of the old generation is what the new map replaced.
func TestClusterLoadPublishesOverARepairedMap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, _, _ := newGatedCluster(t, 2)
	const n = 16
	if _, err := c.CreatePIR(ctx, "db", recSize, 2, 2); err != nil {
		t.Fatal(err)
	}
	first := records(61, n, recSize)
	if _, err := c.Load(ctx, "db", bytes.NewReader(first), dataset.FixedSize); err != nil {
		t.Fatal(err)
	}
	moved := false
	repair := func() {
		m, err := c.Info(ctx, "db")
		if err != nil {
			t.Error(err)
			return
		}
		for s := range m.Shards {
			r := m.Shards[s].Replicas
			r[0], r[len(r)-1] = r[len(r)-1], r[0]
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := c.Etcd().Put(ctx, cluster.MapKey(m.Owner, m.Name), string(b)); err != nil {
			t.Error(err)
			return
		}
		moved = true
	}
	second := records(62, n, recSize)
	m, err := c.Load(ctx, "db", &onFirstRead{r: bytes.NewReader(second), do: repair}, dataset.FixedSize)
	if !moved {
		t.Fatal("the map was not moved under the load")
	}
	if err != nil {
		t.Fatalf("a load over a re-placed map: %v", err)
	}
	if m.Generation != 2 {
		t.Fatalf("published generation %d, want 2", m.Generation)
	}
	for i := range n {
		a, err := c.Get(ctx, "db", i)
		if err != nil {
			t.Fatal(err)
		}
		if a.Generation != 2 || !bytes.Equal(a.Record, second[i*recSize:(i+1)*recSize]) {
			t.Fatalf("record %d of generation %d is not the second load's", i, a.Generation)
		}
	}
}
