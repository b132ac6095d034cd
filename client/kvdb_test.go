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
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// kvOpts: small insecure LWE parameters; values up to 40 bytes in slots of
// 16, so a value spans up to three chunks (six bucket queries a lookup).
var kvOpts = client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 40, SlotData: 16}

// kvData is n keys with seeded values of 0 to 40 bytes, as CSV.
func kvData(seed uint64, n int) (map[string][]byte, []byte) {
	rng := rand.New(rand.NewPCG(seed, 3))
	m := map[string][]byte{}
	var csv bytes.Buffer
	csv.WriteString("key,value\n")
	for i := range n {
		k := fmt.Sprintf("user-%d@example.org", i)
		v := make([]byte, rng.IntN(41))
		for j := range v {
			v[j] = 'a' + byte(rng.IntN(26))
		}
		m[k] = v
		fmt.Fprintf(&csv, "%s,%s\n", k, v)
	}
	return m, csv.Bytes()
}

func createKV(t *testing.T, c *client.Client, name string, csv []byte) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateKV(ctx, name, kvOpts); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, name, bytes.NewReader(csv), client.LoadOptions{KV: kv.CSV, Header: true}); err != nil {
		t.Fatal(err)
	}
}

// checkKV looks every key of want up (byte for byte) and absent keys
// (ErrNotFound).
func checkKV(t *testing.T, c *client.Client, name string, want map[string][]byte, absent ...string) {
	t.Helper()
	ctx := context.Background()
	for k, v := range want {
		got, err := c.Lookup(ctx, name, []byte(k))
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("lookup %q: %q, %v; want %q", k, got, err, v)
		}
	}
	for _, k := range absent {
		if got, err := c.Lookup(ctx, name, []byte(k)); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("lookup of absent %q: %q, %v; want ErrNotFound", k, got, err)
		}
	}
}

// A keyword database loaded from CSV (and from JSONL) answers every key
// byte for byte as a Go map does, and absent keys with ErrNotFound.
func TestKVLookupMatchesMap(t *testing.T) {
	e := newEnv(t)
	want, csv := kvData(1, 80)
	createKV(t, e.c, "kv", csv)
	checkKV(t, e.c, "kv", want, "nobody", "user-80@example.org", "")
	in, err := e.c.Info(context.Background(), "kv")
	if err != nil || in.KV.Entries != 80 || in.Kind != client.KindKV {
		t.Fatalf("info %+v, %v", in, err)
	}
	// JSONL, into a second database; LookupMany answers a batch.
	var jl bytes.Buffer
	keys := [][]byte{[]byte("absent")}
	for k, v := range want {
		fmt.Fprintf(&jl, "{\"key\": %q, \"value\": %q}\n", k, v)
		keys = append(keys, []byte(k))
	}
	ctx := context.Background()
	if _, err := e.c.CreateKV(ctx, "kv2", kvOpts); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "kv2", &jl, client.LoadOptions{KV: kv.JSONL}); err != nil {
		t.Fatal(err)
	}
	res, err := e.c.LookupMany(ctx, "kv2", keys[:12])
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		v, ok := want[string(keys[i])]
		if r.Found != ok || !bytes.Equal(r.Value, v) || r.Queries != 6 {
			t.Fatalf("LookupMany %q: %+v, want %q (%v), 6 queries", keys[i], r, v, ok)
		}
	}
}

// Puts and deletes are visible to the next lookup; compaction folds them
// into a new generation that answers the same, with no delta left.
func TestKVUpdatesThenCompact(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	want, csv := kvData(2, 40)
	createKV(t, e.c, "kv", csv)
	put := func(k, v string) {
		t.Helper()
		if _, err := e.c.Put(ctx, "kv", []byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = []byte(v)
	}
	put("new-key", "a value of exactly forty bytes, chunked!")
	put("user-3@example.org", "overwritten")
	put("empty", "")
	if _, err := e.c.Delete(ctx, "kv", []byte("user-5@example.org")); err != nil {
		t.Fatal(err)
	}
	delete(want, "user-5@example.org")
	if _, err := e.c.Put(ctx, "kv", []byte("k"), bytes.Repeat([]byte("x"), 41)); !errors.Is(err, client.ErrValueTooLarge) {
		t.Fatalf("put of 41 bytes: %v, want ErrValueTooLarge", err)
	}
	checkKV(t, e.c, "kv", want, "user-5@example.org", "k")
	before, _ := e.c.Info(ctx, "kv")
	in, err := e.c.Compact(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if in.Generation != before.Generation+1 || in.Delta != nil || in.KV.Entries != 41 {
		t.Fatalf("compacted: generation %d (was %d), delta %v, %d entries (want 41)", in.Generation, before.Generation, in.Delta, in.KV.Entries)
	}
	checkKV(t, e.c, "kv", want, "user-5@example.org", "k")
}

// While two goroutines look keys up, updates and a compaction run: no
// lookup fails, and none sees a mixed state — a key put before the
// compaction began reads its new value throughout (never the main
// generation's old one), other keys their loaded values.
func TestKVCompactWhileQuerying(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	want, csv := kvData(3, 30)
	createKV(t, e.c, "kv", csv)
	if _, err := e.c.Put(ctx, "kv", []byte("user-1@example.org"), []byte("fresh")); err != nil {
		t.Fatal(err)
	}
	want["user-1@example.org"] = []byte("fresh")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	var lookups [2]int
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("user-%d@example.org", (i*7+g)%30)
				if i%2 == 0 {
					k = "user-1@example.org"
				}
				got, err := e.c.Lookup(ctx, "kv", []byte(k))
				if err != nil || !bytes.Equal(got, want[k]) {
					errs <- fmt.Errorf("lookup %q during compaction: %q, %v; want %q", k, got, err, want[k])
					return
				}
				lookups[g]++
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // the lookups are under way
	if _, err := e.c.Compact(ctx, "kv"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Put(ctx, "kv", []byte("later"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if lookups[0] == 0 || lookups[1] == 0 {
		t.Fatalf("lookups ran %v", lookups)
	}
	want["later"] = []byte("x")
	checkKV(t, e.c, "kv", want)
}

// recorder is a device that records what it is asked: each call's method,
// the object or program it names (generation prefixes cut) and its
// request payload's size.
type recorder struct {
	api.Device
	mu    sync.Mutex
	calls []string
}

func (r *recorder) log(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *recorder) Get(ctx context.Context, req *devicepb.GetRequest) (*devicepb.GetResponse, error) {
	resp, err := r.Device.Get(ctx, req)
	words := 0
	if resp != nil {
		for _, l := range resp.Data {
			words += len(l)
		}
	}
	r.log(fmt.Sprintf("get %s -> %d words", req.Name, words))
	return resp, err
}

func (r *recorder) RunStream(ctx context.Context, req *devicepb.RunStreamRequest) (*devicepb.RunStreamResponse, error) {
	words := 0
	for _, in := range req.Inputs {
		for _, inst := range in.Instances {
			for _, l := range inst.Data {
				words += len(l) / 8
			}
		}
	}
	var stored []string
	for _, s := range req.Stored {
		stored = append(stored, s.Prefix)
	}
	resp, err := r.Device.RunStream(ctx, req)
	out := outputWords(resp)
	r.log(fmt.Sprintf("query %s %v: %d words up, %d down", req.Program, stored, words, out))
	return resp, err
}

// outputWords counts the words of an answer's outputs.
func outputWords(resp *devicepb.RunStreamResponse) int {
	out := 0
	if resp != nil {
		for _, o := range resp.Outputs {
			for _, inst := range o.Instances {
				for _, l := range inst.Data {
					out += len(l) / 8
				}
			}
		}
	}
	return out
}

func (r *recorder) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	resp, err := r.Device.QueryLWE(ctx, req)
	out := len(resp.GetColumn()) + len(resp.GetPacked())
	for _, h := range resp.GetHint() {
		out += len(h)
	}
	// One line a query, the request's size beside it (a packed request
	// carries several).
	n := 1 + len(req.GetMore())
	line := func(up, down int) {
		r.log(fmt.Sprintf("query lwe/%s %d×%d [%s] in a request of %d: %d bytes up, %d down", req.GetParams(), req.GetRows(), req.GetCols(),
			req.GetGeneration(), n, up, down))
	}
	line(len(req.GetQuery())+len(req.GetSecret())+len(req.GetPackingKeys()), out)
	for i, m := range req.GetMore() {
		down := 0
		if i < len(resp.GetMorePacked()) {
			down = len(resp.GetMorePacked()[i])
		}
		line(len(m.GetQuery())+len(m.GetPackingKeys()), down)
	}
	return resp, err
}

// The device sees the same requests, of the same sizes, whether the key
// is in the main generation, in the delta (either of its segments), or
// nowhere.
func TestKVLookupWireShape(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rec := &recorder{Device: e.c.Device()}
	c := client.New(rec, e.keys)
	want, csv := kvData(4, 30)
	createKV(t, c, "kv", csv)
	// Three updates: the delta is two segments (two operations merged,
	// then one), and a key in the older one.
	for _, u := range [][2]string{{"in-delta", "a delta value"}, {"user-2@example.org", "overwritten"}, {"other", "x"}} {
		if _, err := c.Put(ctx, "kv", []byte(u[0]), []byte(u[1])); err != nil {
			t.Fatal(err)
		}
	}
	in, err := c.Info(ctx, "kv")
	if err != nil || in.Delta == nil || len(in.Delta.Segments) != 2 {
		t.Fatalf("delta after three updates: %+v, %v", in.Delta, err)
	}
	if _, err := c.Lookup(ctx, "kv", []byte("warm-up")); !errors.Is(err, client.ErrNotFound) {
		t.Fatal(err) // the session is set up: keys and program
	}
	rec.take()
	seen := map[string][]string{}
	for _, k := range []string{"user-2@example.org", "absent", "in-delta", "user-9@example.org", "other"} {
		_, err := c.Lookup(ctx, "kv", []byte(k))
		if err != nil && !errors.Is(err, client.ErrNotFound) {
			t.Fatal(err)
		}
		calls := rec.take()
		// Queries run several at a time: compare them in order of text.
		slicesSort(calls)
		seen[k] = calls
	}
	if len(want) == 0 || len(seen["absent"]) == 0 {
		t.Fatal("nothing recorded")
	}
	runs := 0
	for _, s := range seen["absent"] {
		if strings.HasPrefix(s, "query ") {
			runs++
		}
	}
	if runs != 6 {
		t.Fatalf("an absent key's lookup asked %d queries, want 6: %v", runs, seen["absent"])
	}
	// Every lookup reads each delta segment whole, after the manifest.
	for _, seg := range in.Delta.Segments {
		n := 0
		for _, s := range seen["absent"] {
			if strings.HasPrefix(s, "get "+seg.Object+" -> ") && !strings.HasSuffix(s, " 0 words") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("an absent key's lookup read delta segment %s %d times: %v", seg.Object, n, seen["absent"])
		}
	}
	for k, calls := range seen {
		if fmt.Sprint(calls) != fmt.Sprint(seen["absent"]) {
			t.Errorf("lookup of %q:\n%v\nabsent key's:\n%v", k, strings.Join(calls, "\n"), strings.Join(seen["absent"], "\n"))
		}
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// A load with a duplicate key, a value over the maximum or a malformed
// line fails with the named error naming the line, and publishes nothing:
// the database answers as before.
func TestKVBadLoadPublishesNothing(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	want, csv := kvData(5, 20)
	createKV(t, e.c, "kv", csv)
	before, _ := e.c.Info(ctx, "kv")
	for _, c := range []struct {
		in   string
		f    kv.Format
		want error
		line string
	}{
		{"a,1\nb,2\na,3\n", kv.CSV, client.ErrDuplicateKey, "line 3"},
		{"a,1\nb," + strings.Repeat("v", 41) + "\n", kv.CSV, client.ErrValueTooLarge, "line 2"},
		{"a,1\nb\n", kv.CSV, client.ErrMalformed, "line 2"},
		{"{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\",\n", kv.JSONL, client.ErrMalformed, "line 2"},
	} {
		_, err := e.c.Load(ctx, "kv", strings.NewReader(c.in), client.LoadOptions{KV: c.f})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.line) {
			t.Errorf("load %q: %v, want %v naming %s", c.in, err, c.want, c.line)
		}
	}
	after, _ := e.c.Info(ctx, "kv")
	if after.Generation != before.Generation || after.Token != before.Token {
		t.Fatalf("a failed load published generation %d (was %d)", after.Generation, before.Generation)
	}
	checkKV(t, e.c, "kv", want, "a", "b")
}

// Set changes a PIR record without a reload, visible to Get and GetMany;
// GetMany returns records byte for byte; Compact keeps the change.
func TestPIRSetGetManyCompact(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const size, n = 40, 200
	data := records(90, n, size)
	if _, err := e.c.CreatePIR(ctx, "db", size, client.PIROptions{LWEParams: "test", InsecureParams: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Load(ctx, "db", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	want := func(i int) []byte { return data[i*size : (i+1)*size] }
	if _, err := e.c.Set(ctx, "db", 17, []byte("changed")); err != nil {
		t.Fatal(err)
	}
	changed := append([]byte("changed"), make([]byte, size-7)...)
	copy(data[17*size:], changed)
	if _, err := e.c.Set(ctx, "db", n, []byte("x")); !errors.Is(err, client.ErrIndexOutOfRange) {
		t.Fatalf("set past the end: %v", err)
	}
	idx := []int{0, 17, 5, 17, n - 1, 100, 33, 64, 1}
	check := func() {
		t.Helper()
		if got, err := e.c.Get(ctx, "db", 17); err != nil || !bytes.Equal(got, changed) {
			t.Fatalf("get 17: %q, %v", got, err)
		}
		recs, err := e.c.GetMany(ctx, "db", idx)
		if err != nil {
			t.Fatal(err)
		}
		for k, i := range idx {
			if !bytes.Equal(recs[k], want(i)) {
				t.Fatalf("GetMany[%d] = record %d: %q, want %q", k, i, recs[k], want(i))
			}
		}
	}
	check()
	if _, err := e.c.Compact(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	check()
}

// A keyword database is covered by the same access rules as every
// database, through a remote device over TLS: another identity may not
// look up or update; a reader granted it looks up (the delta included)
// but may not put, delete or compact.
func TestKVOtherIdentityRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := tlsUsers(t, "alice", "bob")
	alice, bob := cs["alice"], cs["bob"]
	want, csv := kvData(6, 20)
	createKV(t, alice, "kv", csv)
	if _, err := alice.Put(ctx, "kv", []byte("fresh"), []byte("in the delta")); err != nil {
		t.Fatal(err)
	}
	want["fresh"] = []byte("in the delta")
	denied := func(what string, err error) { t.Helper(); wantDenied(t, what, err) }
	_, err := bob.Lookup(ctx, "kv", []byte("user-1@example.org"))
	denied("bob's lookup before a grant", err)
	seg, err := alice.Info(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	_, err = bob.Device().Get(ctx, &devicepb.GetRequest{Name: seg.Delta.Segments[0].Object})
	denied("bob's read of the delta before a grant", err)
	_, err = bob.Put(ctx, "kv", []byte("x"), []byte("y"))
	denied("bob's put before a grant", err)
	trust(t, bob, alice)
	if err := alice.Grant(ctx, "kv", "bob", client.RoleReader, bob.Keys().MemberPublicKey()); err != nil {
		t.Fatal(err)
	}
	checkKV(t, bob, "kv", map[string][]byte{"fresh": want["fresh"], "user-1@example.org": want["user-1@example.org"]}, "absent")
	// The reader reads the delta's objects whole, as it reads the
	// manifest, and no other object of the database.
	in, err := alice.Info(ctx, "kv")
	if err != nil || in.Delta == nil {
		t.Fatalf("info: %+v, %v", in, err)
	}
	if _, err := bob.Device().Get(ctx, &devicepb.GetRequest{Name: in.Delta.Segments[0].Object}); err != nil {
		t.Fatalf("reader's read of the delta: %v", err)
	}
	data, err := alice.Device().List(ctx, &devicepb.ListRequest{Prefix: in.DataPrefix(), MaxObjects: 1})
	if err != nil || len(data.Objects) != 1 {
		t.Fatalf("list data: %+v, %v", data, err)
	}
	_, err = bob.Device().Get(ctx, &devicepb.GetRequest{Name: data.Objects[0].Name})
	denied("reader's read of a data object", err)
	_, err = bob.Put(ctx, "kv", []byte("x"), []byte("y"))
	denied("reader's put", err)
	_, err = bob.Delete(ctx, "kv", []byte("fresh"))
	denied("reader's delete", err)
	_, err = bob.Compact(ctx, "kv")
	denied("reader's compact", err)
	checkKV(t, alice, "kv", want, "x")
}

// The delta fills to its bound, every change in it
// visible, then refuses with ErrDeltaFull until a compaction empties it.
func TestKVDeltaFillsToItsBound(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const bound = 64 << 10
	opts := client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 4096, SlotData: 200, DeltaMax: bound}
	if _, err := e.c.CreateKV(ctx, "kv", opts); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	value := bytes.Repeat([]byte("v"), 4096)
	var err error
	for i := 0; ; i++ {
		k := fmt.Sprintf("key-%04d", i)
		if _, err = e.c.Put(ctx, "kv", []byte(k), value); err != nil {
			break
		}
		want[k] = value
	}
	if !errors.Is(err, client.ErrDeltaFull) || len(want) != (bound-4)/(1+4+8+8+4+4096) { // count; kind, key length, key, index, value length, value
		t.Fatalf("after %d puts: %v, want ErrDeltaFull", len(want), err)
	}
	checkKV(t, e.c, "kv", map[string][]byte{"key-0000": value, fmt.Sprintf("key-%04d", len(want)-1): value}, fmt.Sprintf("key-%04d", len(want)))
	if _, err := e.c.Compact(ctx, "kv"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Put(ctx, "kv", []byte("after"), []byte("compaction")); err != nil {
		t.Fatal(err)
	}
	want["after"] = []byte("compaction")
	checkKV(t, e.c, "kv", want, "absent")
}
