package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// A cluster through the Store interface, as `rosemary db` drives it: typed
// handles create, load and read a PIR and a keyword database (records and
// values byte for byte); a handle of the wrong kind fails with
// client.ErrKind; Drop removes the map at once and every shard object
// from the devices.
func TestClusterStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	c, _, procs := newCluster(t, 2)
	st := cluster.NewStore(c)

	const size, n = 32, 40
	data := records(11, n, size)
	d, err := st.Create(ctx, "recs", client.Spec{Shards: 2, Replicas: 1,
		PIR: &client.PIRSpec{RecordSize: size, PIROptions: client.PIROptions{Scheme: client.SchemeLWE, LWEParams: "test", InsecureParams: true}}})
	if err != nil || d.Head().Kind != client.KindPIR || d.Head().Generation != 0 {
		t.Fatalf("create: %+v, %v", d, err)
	}
	if _, err := st.Create(ctx, "bad", client.Spec{PIR: &client.PIRSpec{RecordSize: size}, KV: &kvTestOpts}); err == nil {
		t.Fatal("a spec of two kinds was accepted")
	}
	recs := st.PIR("recs")
	if d, err = recs.Load(ctx, bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil || d.Head().Records != n || d.Head().Generation != 1 {
		t.Fatalf("load: %+v, %v", d, err)
	}
	r, err := recs.Get(ctx, 7)
	if err != nil || !bytes.Equal(r.Data, data[7*size:8*size]) || r.Generation != 1 || r.QueryBytes == 0 || r.AnswerBytes == 0 || !r.Measured {
		t.Fatalf("get 7: %+v, %v", r, err)
	}
	many, err := recs.GetMany(ctx, []int{0, n - 1})
	if err != nil || !bytes.Equal(many[0], data[:size]) || !bytes.Equal(many[1], data[(n-1)*size:]) {
		t.Fatalf("get many: %q, %v", many, err)
	}
	// The packed mode is the default on a cluster too: the map says so,
	// and the shards were created from it.
	if m, err := c.Info(ctx, "recs"); err != nil || !m.Matrix().Packed || !m.Matrix().NoRing {
		t.Fatalf("the map of a default LWE database: %+v, %v; want packed only", m.Matrix(), err)
	}
	if _, ok := recs.(client.PIRUpdater); ok {
		t.Fatal("a cluster's PIR database offers in-place updates")
	}

	if _, err := st.Create(ctx, "words", client.Spec{Shards: 2, Replicas: 1, KV: &kvTestOpts}); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Info(ctx, "words"); err != nil || !m.Matrix().Packed || !m.Matrix().NoRing {
		t.Fatalf("the map of a default keyword database: %+v, %v; want packed only", m.Matrix(), err)
	}
	want, csv := kvEntries(3, 30)
	words := st.KV("words")
	if _, err := words.Load(ctx, bytes.NewReader(csv), client.LoadOptions{KV: kv.CSV}); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got, err := words.Lookup(ctx, []byte(k)); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("lookup %q: %q, %v; want %q", k, got, err, v)
		}
		break
	}
	if _, err := words.Lookup(ctx, []byte("absent")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("absent key: %v", err)
	}

	// Handles of the wrong kind.
	if _, err := st.KV("recs").Lookup(ctx, []byte("x")); !errors.Is(err, client.ErrKind) {
		t.Fatalf("kv lookup on a pir database: %v, want ErrKind", err)
	}
	if _, err := st.PIR("words").Get(ctx, 0); !errors.Is(err, client.ErrKind) {
		t.Fatalf("get on a kv database: %v, want ErrKind", err)
	}
	if _, err := st.Vectors("recs").Nearest(ctx, []float32{1}, 1); !errors.Is(err, client.ErrKind) {
		t.Fatalf("nearest on a pir database: %v, want ErrKind", err)
	}

	// Drop: the map at once, the shards on every device.
	if err := st.Drop(ctx, "recs"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Info(ctx, "recs"); !errors.Is(err, cluster.ErrNoDatabase) {
		t.Fatalf("info after drop: %v, want ErrNoDatabase", err)
	}
	keys, err := client.NewKeys(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, p := range procs {
		dc, err := client.Open(ctx, p.addr, keys, remote.WithPlaintext())
		if err != nil {
			t.Fatal(err)
		}
		list, err := dc.Device().List(ctx, &devicepb.ListRequest{})
		dc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Objects {
			if strings.HasPrefix(o.Name, "recs.") {
				t.Fatalf("device %s keeps %s after the drop", p.addr, o.Name)
			}
			if strings.HasPrefix(o.Name, "words.") {
				kept++
			}
		}
	}
	if kept == 0 {
		t.Fatal("the drop took the other database's shards too")
	}
	if got, err := words.LookupMany(ctx, [][]byte{[]byte("absent")}); err != nil || got[0].Found {
		t.Fatalf("the other database after the drop: %+v, %v", got, err)
	}
}
