package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/cluster"
)

// kvTestOpts: the small insecure LWE set, values of up to 40 bytes in
// 16-byte slots (three chunks: six queries per shard per lookup).
var kvTestOpts = client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 40, SlotData: 16}

// kvEntries is n keys and values of 0 to 40 bytes, as a Go map and as CSV.
func kvEntries(seed uint64, n int) (map[string][]byte, []byte) {
	r := rand.New(rand.NewPCG(seed, 1))
	want := map[string][]byte{}
	var csv bytes.Buffer
	for i := range n {
		k := fmt.Sprintf("key-%d-%x", i, r.Uint32())
		v := make([]byte, r.IntN(41))
		for j := range v {
			v[j] = 'a' + byte(r.IntN(26))
		}
		want[k] = v
		fmt.Fprintf(&csv, "%s,%s\n", k, v)
	}
	return want, csv.Bytes()
}

// checkKV looks keys of want up, and absent keys, against the map: every
// key an update wrote (those not named "key-…") and the first sample of
// the loaded ones (all of them: sample < 0).
func checkKV(ctx context.Context, t *testing.T, c *cluster.Client, name string, want map[string][]byte, sample, absent int) {
	t.Helper()
	var loaded []string
	var keys [][]byte
	for k := range want {
		if strings.HasPrefix(k, "key-") {
			loaded = append(loaded, k)
		} else {
			keys = append(keys, []byte(k))
		}
	}
	slices.Sort(loaded)
	if sample >= 0 {
		loaded = loaded[:min(sample, len(loaded))]
	}
	for _, k := range loaded {
		keys = append(keys, []byte(k))
	}
	for i := range absent {
		keys = append(keys, fmt.Appendf(nil, "absent-%d", i))
	}
	res, err := c.LookupMany(ctx, name, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		v, ok := want[string(keys[i])]
		if r.Found != ok || !bytes.Equal(r.Value, v) {
			t.Fatalf("%s: found %v %q, want %v %q", keys[i], r.Found, r.Value, ok, v)
		}
	}
}

// A keyword database in 3 shards × 2 replicas over 3 device processes,
// against a Go map: present and absent keys; puts, overwrites and deletes
// visible to the next lookup; bad loads that publish nothing; compaction
// while two clients look keys up and another writes; a device killed
// during lookups.
func TestClusterKV(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and device processes")
	}
	ctx := context.Background()
	start := time.Now()
	c, _, procs := newCluster(t, 3)
	if _, err := c.CreateKV(ctx, "kv", 3, 2, kvTestOpts); err != nil {
		t.Fatal(err)
	}
	want, csv := kvEntries(1, 120)
	m, err := c.LoadKV(ctx, "kv", bytes.NewReader(csv), kv.CSV, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Generation != 1 || m.KV.Entries != 120 || m.Records != m.KV.Layout.Buckets {
		t.Fatalf("loaded: generation %d, %d entries, %d records of %d buckets", m.Generation, m.KV.Entries, m.Records, m.KV.Layout.Buckets)
	}
	checkKV(ctx, t, c, "kv", want, -1, 20)
	t.Logf("%s: %v", "loaded, looked up", time.Since(start))
	if _, err := c.Lookup(ctx, "kv", []byte("nope")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("absent key: %v, want ErrNotFound", err)
	}

	// Bad input: each a named error naming its line; nothing published.
	bad := []struct {
		in   string
		err  error
		line string
	}{
		{"a,1\nb,2\na,3\n", kv.ErrDuplicateKey, "line 3"},
		{"a,1\nb," + strings.Repeat("x", 41) + "\n", kv.ErrValueTooLarge, "line 2"},
		{"a,1\nb,2,3\n", kv.ErrMalformed, "line 2"},
	}
	for _, b := range bad {
		_, err := c.LoadKV(ctx, "kv", strings.NewReader(b.in), kv.CSV, false)
		if !errors.Is(err, b.err) || !strings.Contains(err.Error(), b.line) {
			t.Fatalf("load %q: %v, want %v naming %s", b.in, err, b.err, b.line)
		}
	}
	if _, err := c.LoadKV(ctx, "kv", strings.NewReader("{\"key\": \"a\"}\n"), kv.JSONL, false); !errors.Is(err, kv.ErrMalformed) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("jsonl without a value: %v", err)
	}
	if now, err := c.Info(ctx, "kv"); err != nil || now.Generation != 1 || now.Token != m.Token {
		t.Fatalf("after bad loads: %+v %v, want generation 1 as loaded", now, err)
	}

	// Updates: a put of a new key, an overwrite, a delete, a delete of an
	// absent key, a put to the maximum.
	var first string
	for k := range want {
		first = k
		break
	}
	updates := []struct {
		key   string
		value []byte // nil: delete
	}{
		{"new-key", []byte("new value")},
		{first, []byte("overwritten")},
		{"new-key", nil},
		{"never-there", nil},
		{"big", bytes.Repeat([]byte("z"), 40)},
		{"new-key", []byte("back again")},
	}
	for _, u := range updates {
		var err error
		if u.value == nil {
			_, err = c.Delete(ctx, "kv", []byte(u.key))
			delete(want, u.key)
		} else {
			_, err = c.Put(ctx, "kv", []byte(u.key), u.value)
			want[u.key] = u.value
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Lookup(ctx, "kv", []byte(u.key))
		if u.value == nil && !errors.Is(err, client.ErrNotFound) || u.value != nil && (err != nil || !bytes.Equal(got, u.value)) {
			t.Fatalf("after the update of %s: %q %v, want %q", u.key, got, err, u.value)
		}
	}
	if _, err := c.Put(ctx, "kv", []byte("huge"), bytes.Repeat([]byte("z"), 41)); !errors.Is(err, kv.ErrValueTooLarge) {
		t.Fatalf("a put over the maximum: %v", err)
	}
	checkKV(ctx, t, c, "kv", want, 20, 5)
	t.Logf("%s: %v", "updated", time.Since(start))

	// Compaction while two clients look up and a third writes.
	var wmu sync.Mutex
	snapshot := func() map[string][]byte {
		wmu.Lock()
		defer wmu.Unlock()
		return maps(want)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	lookups := make([]int, 2)
	errc := make(chan error, 8)
	fixed := snapshot()
	var keys []string
	for k := range fixed {
		if !strings.HasPrefix(k, "during-") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[r.IntN(len(keys))]
				got, err := c.Lookup(ctx, "kv", []byte(k))
				if err != nil || !bytes.Equal(got, fixed[k]) {
					errc <- fmt.Errorf("lookup %s during compaction: %q %v, want %q", k, got, err, fixed[k])
					return
				}
				lookups[w]++
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k, v := fmt.Sprintf("during-%d", i), fmt.Appendf(nil, "written during compaction %d", i%10)
			if _, err := c.Put(ctx, "kv", []byte(k), v); err != nil {
				errc <- err
				return
			}
			wmu.Lock()
			want[k] = v
			wmu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	cm, err := c.Compact(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // lookups and a write or two on the new generation
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if cm.Generation != 2 || lookups[0] == 0 || lookups[1] == 0 {
		t.Fatalf("compacted into generation %d; lookups during it %v", cm.Generation, lookups)
	}
	after := snapshot()
	t.Logf("%s: %v", "compacted", time.Since(start))
	checkKV(ctx, t, c, "kv", after, 20, 5)
	if now, _ := c.Info(ctx, "kv"); now.KV.Entries > len(after) || now.KV.Entries < len(fixed) {
		t.Fatalf("%d entries after compaction; %d keys before it, %d after the writes during it", now.KV.Entries, len(fixed), len(after))
	}

	// A device killed while two clients look keys up: every shard has a
	// replica left.
	mctx, stopMaintain := context.WithCancel(ctx)
	maintained := make(chan struct{})
	go func() {
		defer close(maintained)
		c.Maintain(mctx, func(db string, copied int, err error) {
			if err != nil {
				t.Logf("repair of %s: %d copied, %v", db, copied, err)
			}
		})
	}()
	defer func() { stopMaintain(); <-maintained }()
	errc = make(chan error, 4)
	var lw sync.WaitGroup
	for w := range 2 {
		lw.Add(1)
		go func() {
			defer lw.Done()
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for range 6 {
				k := keys[r.IntN(len(keys))]
				got, err := c.Lookup(ctx, "kv", []byte(k))
				if err != nil || !bytes.Equal(got, after[k]) {
					errc <- fmt.Errorf("lookup %s with a device killed: %q %v, want %q", k, got, err, after[k])
					return
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	if err := procs[1].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	lw.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	t.Logf("killed: %v", time.Since(start))
	checkKV(ctx, t, c, "kv", after, 20, 5)

	// The coordinator (Maintain, above) re-replicates the dead device's
	// shards (the delta is in etcd: nothing else to copy); an update and a compaction after it
	// (which sweeps generation 1 off the devices) lose nothing.
	waitDevices(t, c, 2)
	waitMapOf(t, c, "kv", func(m *cluster.Map) bool {
		for _, sh := range m.Shards {
			if len(sh.Replicas) != 2 || slices.Contains(sh.Replicas, "d1") {
				return false
			}
		}
		return true
	})
	if _, err := c.Put(ctx, "kv", []byte("after-repair"), []byte("still here")); err != nil {
		t.Fatal(err)
	}
	after["after-repair"] = []byte("still here")
	if m, err := c.Compact(ctx, "kv"); err != nil || m.Generation != 3 {
		t.Fatalf("compaction after the repair: %+v %v", m, err)
	}
	checkKV(ctx, t, c, "kv", after, 20, 5)
	t.Logf("done: %v", time.Since(start))
}

func maps(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Every device sees the same calls, with messages of the same sizes, for
// a lookup of a present key, of an absent key and of a key the delta
// answers (recorded by each device's server: method, request and answer
// sizes, status).
func TestClusterKVLookupsLookAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	c, gates, _ := newGatedCluster(t, 3)
	// One replica per shard: a hedge to a second replica would add calls
	// at random.
	if _, err := c.CreateKV(ctx, "kv", 3, 1, kvTestOpts); err != nil {
		t.Fatal(err)
	}
	want, csv := kvEntries(2, 60)
	if _, err := c.LoadKV(ctx, "kv", bytes.NewReader(csv), kv.CSV, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "kv", []byte("in-the-delta"), []byte("delta value")); err != nil {
		t.Fatal(err)
	}
	var present string
	for k := range want {
		present = k
		break
	}
	// The first lookup opens the shards' sessions; those after it are
	// what every lookup costs.
	if _, err := c.Lookup(ctx, "kv", []byte(present)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key  string
		want []byte // nil: absent
	}{{present, want[present]}, {"not-there", nil}, {"in-the-delta", []byte("delta value")}}
	var logs [][][]string // by case, by device
	for _, cs := range cases {
		for _, g := range gates {
			g.record()
		}
		got, err := c.Lookup(ctx, "kv", []byte(cs.key))
		if cs.want == nil && !errors.Is(err, client.ErrNotFound) || cs.want != nil && (err != nil || !bytes.Equal(got, cs.want)) {
			t.Fatalf("lookup %s: %q %v, want %q", cs.key, got, err, cs.want)
		}
		var per [][]string
		for _, g := range gates {
			l := g.recorded()
			slices.Sort(l) // the shard's queries run concurrently
			per = append(per, l)
		}
		logs = append(logs, per)
	}
	for d := range gates {
		if len(logs[0][d]) == 0 {
			t.Fatalf("device %d recorded no calls", d)
		}
		for i := 1; i < len(cases); i++ {
			if !slices.Equal(logs[0][d], logs[i][d]) {
				t.Fatalf("device %d: the lookup of %s made calls\n%s\nthe lookup of %s\n%s", d, cases[0].key, strings.Join(logs[0][d], "\n"),
					cases[i].key, strings.Join(logs[i][d], "\n"))
			}
		}
	}
	t.Logf("each lookup: %d calls on each device, the same three times; device 0:\n%s", len(logs[0][0]), strings.Join(logs[0][0], "\n"))
}

// On TLS devices and etcd with RBAC, another user can neither look up,
// update, load nor compact a user's keyword database, nor read or write
// its delta in etcd directly; the owner's data is untouched.
func TestClusterKVOtherIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and devices")
	}
	ctx := context.Background()
	e := startEtcd(t)
	for i := range 2 {
		startTLSDevice(t, e, fmt.Sprintf("d%d", i))
	}
	alice, bob := userOf(t, e, "alice"), userOf(t, e, "bob")
	waitDevices(t, alice, 2)
	if _, err := alice.CreateKV(ctx, "kv", 2, 1, kvTestOpts); err != nil {
		t.Fatal(err)
	}
	want, csv := kvEntries(3, 20)
	if _, err := alice.LoadKV(ctx, "kv", bytes.NewReader(csv), kv.CSV, false); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Put(ctx, "kv", []byte("secret"), []byte("alice's")); err != nil {
		t.Fatal(err)
	}
	want["secret"] = []byte("alice's")

	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cluster.ErrDenied) {
			t.Fatalf("bob %s alice's kv database: %v, want ErrDenied", what, err)
		}
	}
	_, err := bob.Lookup(ctx, "alice/kv", []byte("secret"))
	denied("looks up in", err)
	_, err = bob.LookupMany(ctx, "alice/kv", [][]byte{[]byte("secret")})
	denied("looks up many in", err)
	_, err = bob.Put(ctx, "alice/kv", []byte("secret"), []byte("bob's"))
	denied("puts into", err)
	_, err = bob.Delete(ctx, "alice/kv", []byte("secret"))
	denied("deletes from", err)
	_, err = bob.Compact(ctx, "alice/kv")
	denied("compacts", err)
	_, err = bob.LoadKV(ctx, "alice/kv", strings.NewReader("secret,bob's\n"), kv.CSV, false)
	denied("loads", err)

	raw := connect(t, e, "bob")
	_, err = raw.Put(ctx, cluster.KVDeltaKey("alice", "kv")+"head", `{"token":0}`)
	wantDenied(t, "bob writes alice's delta head", cluster.Denied(err))
	_, err = raw.Get(ctx, cluster.KVDeltaKey("alice", "kv"), clientv3.WithPrefix())
	wantDenied(t, "bob reads alice's delta", cluster.Denied(err))
	_, err = raw.Delete(ctx, cluster.KVDeltaKey("alice", "kv"), clientv3.WithPrefix())
	wantDenied(t, "bob deletes alice's delta", cluster.Denied(err))

	checkKV(ctx, t, alice, "kv", want, -1, 3)

	// A database never loaded: the delta alone answers, and a compaction
	// makes its first generation of it.
	if _, err := alice.CreateKV(ctx, "fresh", 2, 1, kvTestOpts); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Put(ctx, "fresh", []byte("a"), []byte("first")); err != nil {
		t.Fatal(err)
	}
	checkKV(ctx, t, alice, "fresh", map[string][]byte{"a": []byte("first")}, -1, 2)
	if m, err := alice.Compact(ctx, "fresh"); err != nil || m.Generation != 1 || m.KV.Entries != 1 {
		t.Fatalf("compaction of a delta alone: %+v %v", m, err)
	}
	checkKV(ctx, t, alice, "fresh", map[string][]byte{"a": []byte("first")}, -1, 2)
}
