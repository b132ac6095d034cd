package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// heapOpts: small insecure parameters (N = 256: heap columns of 256 bytes,
// 240 of them value), values up to 600 bytes: four heap columns a lookup.
var heapOpts = client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 600, Layout: client.KVHeapLayout}

// heapData is n keys with seeded values of 0 to 600 bytes (key-0's empty,
// key-1's of 600), as JSONL.
func heapData(seed uint64, n int) (map[string][]byte, []byte) {
	rng := rand.New(rand.NewPCG(seed, 5))
	m := map[string][]byte{}
	var b bytes.Buffer
	for i := range n {
		k := fmt.Sprintf("key-%d", i)
		l := rng.IntN(120)
		if rng.IntN(8) == 0 {
			l = rng.IntN(601)
		}
		switch i {
		case 0:
			l = 0
		case 1:
			l = 600
		}
		v := make([]byte, l)
		for j := range v {
			v[j] = 'a' + byte(rng.IntN(26))
		}
		m[k] = v
		fmt.Fprintf(&b, "{\"key\": %q, \"value\": %q}\n", k, v)
	}
	return m, b.Bytes()
}

func createHeap(t *testing.T, c *client.Client, name string, jsonl []byte) *client.Info {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateKV(ctx, name, heapOpts); err != nil {
		t.Fatal(err)
	}
	in, err := c.Load(ctx, name, bytes.NewReader(jsonl), client.LoadOptions{KV: kv.JSONL})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// checkMany looks want's keys and absent up in one LookupMany and compares
// every value byte for byte.
func checkMany(t *testing.T, c *client.Client, name string, want map[string][]byte, absent ...string) {
	t.Helper()
	var keys [][]byte
	for k := range want {
		keys = append(keys, []byte(k))
	}
	for _, k := range absent {
		keys = append(keys, []byte(k))
	}
	got, err := c.LookupMany(context.Background(), name, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		w, ok := want[string(keys[i])]
		if r.Found != ok || !bytes.Equal(r.Value, w) || (ok && r.Value == nil) {
			t.Fatalf("%s: found %v, %d bytes; want found %v, %d bytes", keys[i], r.Found, len(r.Value), ok, len(w))
		}
	}
}

func TestKVHeapLookupUpdateCompact(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	want, data := heapData(1, 60)
	in := createHeap(t, e.c, "h", data)
	hp := in.KV.Heap
	if hp == nil || hp.Heap.Queries() != 4 || hp.Heap.Payload != 240 || in.KV.Entries != 60 {
		t.Fatalf("heap part %+v, entries %d", hp, in.KV.Entries)
	}
	var total int
	for _, v := range want {
		total += len(v)
	}
	if hp.Heap.Bytes != int64(total) || hp.Heap.Columns != (total+239)/240 {
		t.Fatalf("heap of %d bytes in %d columns, want %d bytes", hp.Heap.Bytes, hp.Heap.Columns, total)
	}
	// Both databases store the packer and no hint diagonals.
	list, err := e.c.Device().List(ctx, &devicepb.ListRequest{Prefix: in.DataPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range list.Objects {
		rest := strings.TrimPrefix(o.Name, in.DataPrefix())
		rest = strings.TrimPrefix(rest, "heap/")
		if len(rest) > 5 {
			kinds[rest[:5]]++
		}
	}
	if kinds["lwe/d"] != 0 || kinds["lwe/p"] < 2 || kinds["lwe/t"] < 2 {
		t.Fatalf("stored objects by kind: %v (want tiles and packers of both, no diagonals)", kinds)
	}
	// One at a time: the empty value, the largest, an absent key.
	for _, k := range []string{"key-0", "key-1", "key-7"} {
		v, err := e.c.Lookup(ctx, "h", []byte(k))
		if err != nil || !bytes.Equal(v, want[k]) || v == nil {
			t.Fatalf("%s: %d bytes (%v), want %d", k, len(v), err, len(want[k]))
		}
	}
	if _, err := e.c.Lookup(ctx, "h", []byte("nobody")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("absent key: %v", err)
	}
	checkMany(t, e.c, "h", want, "nobody", "key-60")
	r, err := e.c.LookupMany(ctx, "h", [][]byte{[]byte("key-2")})
	if err != nil || r[0].Queries != 2+4 {
		t.Fatalf("queries a lookup: %v %v", r, err)
	}

	// Updates in the delta, then folded in by a compaction.
	big := bytes.Repeat([]byte("Z"), 600)
	for _, u := range []struct {
		k string
		v []byte
	}{{"key-3", []byte("changed")}, {"new-key", big}, {"key-1", nil}, {"empty-new", []byte{}}} {
		if _, err := e.c.Put(ctx, "h", []byte(u.k), u.v); err != nil {
			t.Fatal(err)
		}
		want[u.k] = u.v
	}
	want["key-1"], want["empty-new"] = []byte{}, []byte{}
	if _, err := e.c.Delete(ctx, "h", []byte("key-4")); err != nil {
		t.Fatal(err)
	}
	delete(want, "key-4")
	if _, err := e.c.Put(ctx, "h", []byte("key-5"), bytes.Repeat([]byte("x"), 601)); !errors.Is(err, client.ErrValueTooLarge) {
		t.Fatalf("a value over the maximum: %v", err)
	}
	checkMany(t, e.c, "h", want, "key-4", "nobody")
	in, err = e.c.Compact(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if in.KV.Heap == nil || in.KV.Entries != len(want) || in.Generation != 2 {
		t.Fatalf("after compaction: heap %v, %d entries (want %d), generation %d", in.KV.Heap != nil, in.KV.Entries, len(want), in.Generation)
	}
	checkMany(t, e.c, "h", want, "key-4", "nobody")
	// A fresh client (no cached session) reads the compacted generation.
	c2 := client.New(e.c.Device(), e.keys)
	defer c2.Close()
	checkMany(t, c2, "h", want, "key-4")
}

// heapRecorder logs every QueryLWE: which database (index or heap), the
// request's sizes and the answer's.
type heapRecorder struct {
	api.Device
	mu    sync.Mutex
	calls []string
}

func (r *heapRecorder) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	resp, err := r.Device.QueryLWE(ctx, req)
	what := "index"
	if strings.HasSuffix(req.GetGeneration(), "/heap") {
		what = "heap"
	}
	up := []int{len(req.GetQuery()) + len(req.GetPackingKeys())}
	down := []int{len(resp.GetPacked())}
	for i, m := range req.GetMore() {
		up = append(up, len(m.GetQuery())+len(m.GetPackingKeys()))
		if i < len(resp.GetMorePacked()) {
			down = append(down, len(resp.GetMorePacked()[i]))
		}
	}
	r.mu.Lock()
	r.calls = append(r.calls, fmt.Sprintf("%s %d×%d, %d queries: %v bytes up, %v down", what, req.GetRows(), req.GetCols(),
		len(up), up, down))
	r.mu.Unlock()
	return resp, err
}

func (r *heapRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	slicesSort(out)
	return out
}

// The device sees the same packed queries, in the same numbers and of the
// same sizes, for a present key with a short, empty or the longest value,
// a key answered by the delta, and an absent key: one request a round,
// the index's two buckets in one, the heap's four columns in the other.
func TestKVHeapWireShape(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rec := &heapRecorder{Device: e.c.Device()}
	c := client.New(rec, e.keys)
	defer c.Close()
	_, data := heapData(2, 40)
	createHeap(t, c, "h", data)
	if _, err := c.Put(ctx, "h", []byte("in-delta"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	rec.take()
	var first []string
	for _, k := range []string{"key-1", "key-0", "key-2", "in-delta", "absent"} {
		if _, err := c.Lookup(ctx, "h", []byte(k)); err != nil && !errors.Is(err, client.ErrNotFound) {
			t.Fatal(err)
		}
		got := rec.take()
		if len(got) != 2 || !strings.HasPrefix(got[0], "heap") || !strings.Contains(got[0], "4 queries") ||
			!strings.HasPrefix(got[1], "index") || !strings.Contains(got[1], "2 queries") {
			t.Fatalf("%s: requests %v, want one of 4 heap queries and one of 2 index queries", k, got)
		}
		if first == nil {
			first = got
		} else if fmt.Sprint(got) != fmt.Sprint(first) {
			t.Fatalf("%s: the device saw\n%v\nwhere key-1 showed it\n%v", k, got, first)
		}
	}
}

// The default layout is the heap where a value can be longer than a slot,
// the cuckoo table otherwise (or where the slot is given); a cuckoo
// database — every one made before the heap layout — reads as before
// beside a heap one on the same client.
func TestKVAutoLayoutAndCuckooBeside(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for _, c := range []struct {
		name string
		opt  client.KVOptions
		heap bool
	}{
		{"long", client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 600}, true},
		{"short", client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 40}, false},
		{"slotted", client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 600, SlotData: 100}, false},
		{"forced", client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 40, Layout: client.KVHeapLayout}, true},
	} {
		in, err := e.c.CreateKV(ctx, c.name, c.opt)
		if err != nil || (in.KV.Heap != nil) != c.heap {
			t.Fatalf("%s: heap %v (%v), want %v", c.name, in != nil && in.KV.Heap != nil, err, c.heap)
		}
	}
	if _, err := e.c.CreateKV(ctx, "bad", client.KVOptions{LWEParams: "test", InsecureParams: true, Layout: "tree"}); err == nil {
		t.Fatal("an unknown layout was accepted")
	}
	want, data := heapData(6, 25)
	for _, name := range []string{"long", "slotted"} {
		if _, err := e.c.Load(ctx, name, bytes.NewReader(data), client.LoadOptions{KV: kv.JSONL}); err != nil {
			t.Fatal(err)
		}
	}
	checkMany(t, e.c, "slotted", want, "nobody")
	checkMany(t, e.c, "long", want, "nobody")
	in, err := e.c.Info(ctx, "slotted")
	if err != nil || in.KV.Heap != nil || in.KV.Layout.Queries() != 2*6 {
		t.Fatalf("the cuckoo database: %+v, %v", in, err)
	}
}

// Over TLS: a fresh process's heap lookup is right, in requests of several
// queries. A device of the wire version before two keys gets a database
// of PackV2 and a named refusal for one of PackV3; one before packing
// versions gets a
// database of PackV1 (which the current device answers too) and a named
// refusal for one of PackV2; one of the wire version before batches gets
// one query a request; one that says an older wire version still (no
// packed mode) gets a cuckoo table by default and a named refusal for the
// heap layout.
func TestKVHeapOverTLSAndOlderDevice(t *testing.T) {
	ctx := context.Background()
	td := countedTLSDevice(t)
	keys, err := client.NewKeys(td.keyDir)
	if err != nil {
		t.Fatal(err)
	}
	open := func(wire uint32) *client.Client {
		t.Helper()
		td.log.mu.Lock()
		td.log.wire, td.log.packed, td.log.packedQueries = wire, 0, 0
		td.log.mu.Unlock()
		c, err := client.Open(ctx, td.lis.Addr().String(), keys, remote.WithTLS(td.cfg))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	counts := func() (requests, queries int) {
		td.log.mu.Lock()
		defer td.log.mu.Unlock()
		return td.log.packed, td.log.packedQueries
	}
	c := open(api.WireVersion)
	want, data := heapData(7, 20)
	createHeap(t, c, "h", data)
	c.Close()
	fresh := open(api.WireVersion)
	if in, err := fresh.Info(ctx, "h"); err != nil || in.KV.Packing != lwepir.PackLatest {
		t.Fatalf("a new database's packing version: %v, %v; want %d", in.KV.Packing, err, lwepir.PackLatest)
	}
	checkMany(t, fresh, "h", want, "nobody")
	fresh.Close()
	if requests, queries := counts(); queries <= requests {
		t.Errorf("%d packed queries in %d requests: none carried several", queries, requests)
	}
	// A device of the wire version before two keys: a database created
	// through it is of PackV2, and the PackV3 one is refused by name.
	seven := open(api.TwoKeysWireVersion - 1)
	createHeap(t, seven, "h2", data)
	if in, err := seven.Info(ctx, "h2"); err != nil || in.KV.Packing != lwepir.PackV2 {
		t.Fatalf("the packing version through a device of wire 7: %v, %v; want %d", in.KV.Packing, err, lwepir.PackV2)
	}
	checkMany(t, seven, "h2", want, "nobody")
	if _, err := seven.Lookup(ctx, "h", []byte("key-1")); !errors.Is(err, client.ErrPackedDevice) {
		t.Fatalf("a PackV3 lookup through a device of wire 7: %v", err)
	}
	seven.Close()
	current2 := open(api.WireVersion)
	checkMany(t, current2, "h2", want, "nobody")
	current2.Close()
	// A device of the wire version before packing versions: a database
	// created through it is of PackV1, and the PackV2 one is refused by name.
	older := open(api.PackingWireVersion - 1)
	createHeap(t, older, "h1", data)
	if in, err := older.Info(ctx, "h1"); err != nil || in.KV.Packing != lwepir.PackV1 {
		t.Fatalf("the packing version through an older device: %v, %v; want %d", in.KV.Packing, err, lwepir.PackV1)
	}
	checkMany(t, older, "h1", want, "nobody")
	if _, err := older.Lookup(ctx, "h", []byte("key-1")); !errors.Is(err, client.ErrPackedDevice) {
		t.Fatalf("a PackV2 lookup through a device before packing versions: %v", err)
	}
	older.Close()
	// The PackV1 database through the current device and client.
	current := open(api.WireVersion)
	checkMany(t, current, "h1", want, "nobody")
	current.Close()
	// A device of the wire version before batches gets one query a
	// request, and the same answers.
	unbatched := open(api.BatchWireVersion - 1)
	checkMany(t, unbatched, "h1", want, "nobody")
	unbatched.Close()
	if requests, queries := counts(); requests == 0 || queries != requests {
		t.Errorf("an older device: %d packed queries in %d requests, want one a request", queries, requests)
	}
	old := open(api.PackedWireVersion - 1)
	defer old.Close()
	auto := heapOpts
	auto.Layout = client.KVAuto
	if in, err := old.CreateKV(ctx, "auto", auto); err != nil || in.KV.Heap != nil {
		t.Fatalf("auto layout on an older device: heap %v, %v", in != nil && in.KV.Heap != nil, err)
	}
	if _, err := old.CreateKV(ctx, "forced", heapOpts); !errors.Is(err, client.ErrPackedDevice) {
		t.Fatalf("heap layout on an older device: %v", err)
	}
	for _, name := range []string{"h", "h1"} {
		if _, err := old.Lookup(ctx, name, []byte("key-1")); !errors.Is(err, client.ErrPackedDevice) {
			t.Fatalf("a heap lookup of %s through an older device: %v", name, err)
		}
	}
}

// A reader granted a heap database looks keys up (both rounds, the delta)
// over TLS; before the grant, and for updates after it, it is refused.
func TestKVHeapReader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := tlsUsers(t, "alice", "bob")
	alice, bob := cs["alice"], cs["bob"]
	want, data := heapData(8, 20)
	createHeap(t, alice, "h", data)
	if _, err := alice.Put(ctx, "h", []byte("fresh"), []byte("in the delta")); err != nil {
		t.Fatal(err)
	}
	want["fresh"] = []byte("in the delta")
	_, err := bob.Lookup(ctx, "h", []byte("key-1"))
	wantDenied(t, "bob's lookup before a grant", err)
	trust(t, bob, alice)
	if err := alice.Grant(ctx, "h", "bob", client.RoleReader, bob.Keys().MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	checkMany(t, bob, "h", want, "absent")
	_, err = bob.Put(ctx, "h", []byte("x"), []byte("y"))
	wantDenied(t, "reader's put", err)
}

// An empty load makes an empty heap (one column, no value) that answers
// "not found", takes puts and compacts.
func TestKVHeapEmpty(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	createHeap(t, e.c, "h", nil)
	checkMany(t, e.c, "h", map[string][]byte{}, "nobody")
	if _, err := e.c.Put(ctx, "h", []byte("one"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	in, err := e.c.Compact(ctx, "h")
	if err != nil || in.KV.Entries != 1 || in.KV.Heap.Heap.Bytes != 1 {
		t.Fatalf("compacted: %+v, %v", in, err)
	}
	checkMany(t, e.c, "h", map[string][]byte{"one": []byte("1")}, "nobody")
}

// A new generation's publication removes the old one whole, its heap
// included (the heap lies inside the generation's prefix).
func TestKVHeapOldGenerationRemoved(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c := client.New(e.c.Device(), e.keys)
	_, data := heapData(9, 10)
	old := createHeap(t, c, "h", data)
	if l, err := e.c.Device().List(ctx, &devicepb.ListRequest{Prefix: old.DataPrefix() + "heap/"}); err != nil || len(l.Objects) == 0 {
		t.Fatalf("generation 1's heap objects: %v, %v", l, err)
	}
	if _, err := c.Load(ctx, "h", bytes.NewReader(data), client.LoadOptions{KV: kv.JSONL}); err != nil {
		t.Fatal(err)
	}
	c.Close() // waits for the removals
	list, err := e.c.Device().List(ctx, &devicepb.ListRequest{Prefix: old.DataPrefix()})
	if err != nil || len(list.Objects) != 0 {
		t.Fatalf("generation %d's objects left: %d (%v)", old.Generation, len(list.GetObjects()), err)
	}
}

// TestKVHeapTallDefault: where the largest value spans 16 columns of N rows
// or more and the data outweighs one more pack of packer, the heap's
// default columns are 2N tall (half the queries a lookup); otherwise N; an
// explicit HeapRows is kept; a light database that grows past a pack gets
// the taller columns at its next compaction. Every value checked reads
// back byte for byte, the largest included.
func TestKVHeapTallDefault(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const n, payload = 256, 240 // test parameters: N, and a column's value bytes
	for _, c := range []struct {
		maxValue, heapRows, keys, rows int
	}{
		{16*payload - 1, 0, 170, n}, // values span fewer than 16 columns
		{16 * payload, 0, 8, n},     // the data is lighter than a pack
		{16 * payload, 0, 170, 2 * n},
		{16 * payload, n, 170, n}, // pinned
	} {
		name := fmt.Sprintf("tall-%d-%d-%d", c.maxValue, c.heapRows, c.keys)
		opts := heapOpts
		opts.MaxValue, opts.HeapRows = c.maxValue, c.heapRows
		if _, err := e.c.CreateKV(ctx, name, opts); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(c.maxValue), 9))
		all, some := map[string][]byte{}, map[string][]byte{}
		var b bytes.Buffer
		for i := range c.keys {
			v := make([]byte, 3000+rng.IntN(800))
			if i == 0 {
				v = make([]byte, c.maxValue)
			}
			for j := range v {
				v[j] = 'a' + byte(rng.IntN(26))
			}
			k := fmt.Sprintf("k%d", i)
			all[k] = v
			if i%29 == 0 {
				some[k] = v
			}
			fmt.Fprintf(&b, "{\"key\": %q, \"value\": %q}\n", k, v)
		}
		in, err := e.c.Load(ctx, name, bytes.NewReader(b.Bytes()), client.LoadOptions{KV: kv.JSONL})
		if err != nil {
			t.Fatal(err)
		}
		if got := in.KV.Heap.Heap.Rows; got != c.rows || in.KV.Heap.AutoRows != (c.heapRows == 0) {
			t.Fatalf("max value %d, HeapRows %d, %d keys: columns of %d rows (auto %v), want %d", c.maxValue, c.heapRows, c.keys, got, in.KV.Heap.AutoRows, c.rows)
		}
		checkMany(t, e.c, name, some, "absent")
		if c.keys >= 170 || c.heapRows != 0 {
			continue
		}
		// The light database grows past a pack through its delta: the
		// compaction that folds it in chooses the taller columns.
		for i := c.keys; i < 170; i++ {
			v := bytes.Repeat([]byte{'a' + byte(i%26)}, 3000+i)
			k := fmt.Sprintf("k%d", i)
			if _, err := e.c.Put(ctx, name, []byte(k), v); err != nil {
				t.Fatal(err)
			}
			if i%29 == 0 {
				some[k] = v
			}
		}
		in, err = e.c.Compact(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := in.KV.Heap.Heap.Rows; got != 2*n || !in.KV.Heap.AutoRows {
			t.Fatalf("%s compacted at %d entries: columns of %d rows (auto %v), want %d", name, in.KV.Entries, got, in.KV.Heap.AutoRows, 2*n)
		}
		checkMany(t, e.c, name, some, "absent")
	}
}
