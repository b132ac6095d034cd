package client_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
)

// One device through the Store interface: typed handles create, load,
// read and update each kind (records, values and neighbours checked
// against the data); a handle of the wrong kind fails with ErrKind before
// touching the database; a spec of no kind, two kinds, or shards is
// refused.
func TestDeviceStore(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	st := client.NewStore(e.c)

	const size, n = 24, 60
	data := secretRecords(n, size)
	pir := client.Spec{PIR: &client.PIRSpec{RecordSize: size, PIROptions: client.PIROptions{LWEParams: "test", InsecureParams: true}}}
	for _, bad := range []client.Spec{{}, {PIR: pir.PIR, KV: &kvOpts}, {PIR: pir.PIR, Shards: 2}, {PIR: pir.PIR, Replicas: 3}} {
		if d, err := st.Create(ctx, "bad", bad); err == nil || d != nil {
			t.Fatalf("create %+v: %v, %v", bad, d, err)
		}
	}
	d, err := st.Create(ctx, "recs", pir)
	if err != nil || d.Head().Name != "recs" || d.Head().Kind != client.KindPIR {
		t.Fatalf("create: %+v, %v", d, err)
	}
	recs := st.PIR("recs")
	if d, err = recs.Load(ctx, bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil || d.Head().Records != n || d.Head().Generation != 1 {
		t.Fatalf("load: %+v, %v", d, err)
	}
	r, err := recs.Get(ctx, 9)
	if err != nil || r.Index != 9 || !bytes.Equal(r.Data, data[9*size:10*size]) || r.QueryBytes == 0 || r.AnswerBytes == 0 || !r.OnDevice {
		t.Fatalf("get 9: %+v, %v", r, err)
	}
	up, ok := recs.(client.PIRUpdater)
	if !ok {
		t.Fatal("a device's PIR database offers no updates")
	}
	if _, err := up.Set(ctx, 3, []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if d, err = up.Compact(ctx); err != nil || d.Head().Generation != 2 {
		t.Fatalf("compact: %+v, %v", d, err)
	}
	many, err := recs.GetMany(ctx, []int{3, n - 1})
	if err != nil || !bytes.Equal(many[0], append([]byte("changed"), make([]byte, size-7)...)) || !bytes.Equal(many[1], data[(n-1)*size:]) {
		t.Fatalf("get many after set and compact: %q, %v", many, err)
	}

	if _, err := st.Create(ctx, "words", client.Spec{KV: &kvOpts}); err != nil {
		t.Fatal(err)
	}
	words := st.KV("words")
	if _, err := words.Load(ctx, bytes.NewReader([]byte("a,alpha\nb,beta\n")), client.LoadOptions{KV: kv.CSV}); err != nil {
		t.Fatal(err)
	}
	if _, err := words.Put(ctx, []byte("c"), []byte("gamma")); err != nil {
		t.Fatal(err)
	}
	got, err := words.LookupMany(ctx, [][]byte{[]byte("b"), []byte("c"), []byte("z")})
	if err != nil || string(got[0].Value) != "beta" || string(got[1].Value) != "gamma" || got[2].Found {
		t.Fatalf("lookups: %+v, %v", got, err)
	}

	const dim = 8
	vecs := gaussian(rand.New(rand.NewPCG(1, 2)), 50, dim)
	var buf bytes.Buffer
	if err := dataset.WriteFVecs(&buf, vecs); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, "vecs", client.Spec{Vectors: &client.VectorSpec{Dim: dim}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Vectors("vecs").Load(ctx, bytes.NewReader(buf.Bytes()), client.LoadOptions{Vectors: dataset.FVecs}); err != nil {
		t.Fatal(err)
	}
	nb, err := st.Vectors("vecs").Nearest(ctx, vecs[17], 1)
	if err != nil || len(nb.IDs) != 1 || nb.IDs[0] != 17 {
		t.Fatalf("nearest to vector 17: %+v, %v", nb, err)
	}

	// The wrong kind, for each handle: refused, nothing written.
	if _, err := st.KV("recs").Lookup(ctx, []byte("a")); !errors.Is(err, client.ErrKind) {
		t.Fatalf("lookup on a pir database: %v", err)
	}
	if _, err := st.PIR("words").Load(ctx, bytes.NewReader(data), client.LoadOptions{}); !errors.Is(err, client.ErrKind) {
		t.Fatalf("pir load of a kv database: %v", err)
	}
	if _, err := st.KV("recs").Compact(ctx); !errors.Is(err, client.ErrKind) {
		t.Fatalf("kv compact of a pir database: %v", err)
	}
	if _, err := st.Vectors("words").Nearest(ctx, vecs[0], 1); !errors.Is(err, client.ErrKind) {
		t.Fatalf("nearest on a kv database: %v", err)
	}
	if d, err := st.Info(ctx, "words"); err != nil || d.Head().Generation != 1 {
		t.Fatalf("the kv database after the refused calls: %+v, %v", d, err)
	}

	if err := st.Drop(ctx, "recs"); err != nil {
		t.Fatal(err)
	}
	if d, err := st.Info(ctx, "recs"); err == nil || d != nil {
		t.Fatalf("info after drop: %+v, %v", d, err)
	}
	if _, ok := st.(client.Sharer); !ok {
		t.Fatal("a device's store does not share")
	}
}
