package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// lookupAll looks every key of want up in one batch and compares values
// byte for byte (absent keys: want nil and not found).
func lookupAll(t *testing.T, c *client.Client, name string, want map[string][]byte, absent ...string) {
	t.Helper()
	var keys [][]byte
	for k := range want {
		keys = append(keys, []byte(k))
	}
	for _, k := range absent {
		keys = append(keys, []byte(k))
	}
	res, err := c.LookupMany(context.Background(), name, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		v, ok := want[string(keys[i])]
		if r.Found != ok || !bytes.Equal(r.Value, v) {
			t.Fatalf("lookup %q: found %v, %q; want %v, %q", keys[i], r.Found, r.Value, ok, v)
		}
	}
}

// 10,000 updates, each visible to the next lookup, all visible at the
// end (one batch of every key); the delta stays at most log2(n)+1
// segments, and a compaction folds all of it into a generation that
// answers the same by PIR.
func TestKV10000UpdatesVisible(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.c.CreateKV(ctx, "kv", kvOpts); err != nil {
		t.Fatal(err)
	}
	const n = 10000
	want := map[string][]byte{}
	for i := range n {
		k, v := fmt.Sprintf("k%05d", i), []byte(fmt.Sprintf("v%d", i*7))
		if i%10 == 3 && i > 10 {
			// Overwrites and deletes of earlier keys, too.
			k = fmt.Sprintf("k%05d", i-10)
		}
		var err error
		if i%97 == 0 && i > 0 {
			_, err = e.c.Delete(ctx, "kv", []byte(k))
			delete(want, k)
		} else {
			_, err = e.c.Put(ctx, "kv", []byte(k), v)
			want[k] = v
		}
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if i%1000 == 999 {
			got, err := e.c.Lookup(ctx, "kv", []byte(k))
			if err != nil || !bytes.Equal(got, want[k]) {
				t.Fatalf("lookup right after update %d: %q, %v; want %q", i, got, err, want[k])
			}
		}
	}
	in, err := e.c.Info(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if in.Delta == nil || in.Delta.Ops != n || len(in.Delta.Segments) > bits.Len(n) {
		t.Fatalf("delta after %d updates: %+v", n, in.Delta)
	}
	lookupAll(t, e.c, "kv", want, "k99999", "absent")
	if _, err := e.c.Compact(ctx, "kv"); err != nil {
		t.Fatal(err)
	}
	sample := map[string][]byte{}
	for k, v := range want {
		if len(sample) == 24 {
			break
		}
		sample[k] = v
	}
	lookupAll(t, e.c, "kv", sample, "k00097", "absent")
	// No segment of the folded delta is left on the device.
	if ls, err := e.c.Device().List(ctx, &devicepb.ListRequest{Prefix: "kv/delta/"}); err != nil || len(ls.Objects) != 0 {
		t.Fatalf("after compaction the device holds %d delta objects (%v)", len(ls.Objects), err)
	}
}

// racer forces two writers to interleave: before each compare-and-swap
// of the manifest that passes through it (writer A), it lets writer B
// make a whole update first, so A's swap fails.
type racer struct {
	api.Device
	mu     sync.Mutex
	b      *client.Client
	races  int // B's updates still to make
	done   int
	failed error
}

func (r *racer) Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	if req.Name == "kv/head" && req.IfGeneration != nil {
		r.mu.Lock()
		if r.races > 0 {
			r.races--
			if _, err := r.b.Put(ctx, "kv", []byte(fmt.Sprintf("b-%d", r.done)), []byte("from B")); err != nil && r.failed == nil {
				r.failed = err
			}
			r.done++
		}
		r.mu.Unlock()
	}
	return r.Device.Put(ctx, req)
}

// checkNoOrphans lists the delta objects on the device and checks each is
// one the manifest lists (a segment or one retired by the last update): a
// writer that lost a swap left nothing behind. It first waits for the
// background deleters of c and of the other writers (each client deletes
// the segments its own updates replaced).
func checkNoOrphans(t *testing.T, c *client.Client, writers ...*client.Client) {
	t.Helper()
	ctx := context.Background()
	for _, w := range append(writers, c) {
		client.WaitCleanup(w)
	}
	in, err := c.Info(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range in.Delta.Segments {
		listed[s.Object] = true
	}
	for _, o := range in.Delta.Retired {
		listed[o] = true
	}
	ls, err := c.Device().List(ctx, &devicepb.ListRequest{Prefix: "kv/delta/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ls.Objects {
		if !listed[o.Name] {
			t.Errorf("delta object %s is listed by no manifest", o.Name)
		}
	}
}

// Two writers: an update whose swap loses to another writer's retries on
// the new manifest, and neither update is lost; one that loses every
// time fails with ErrUpdateConflict, applies nothing and leaves nothing
// behind; two clients updating at once lose nothing.
func TestKVUpdateConflict(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.c.CreateKV(ctx, "kv", kvOpts); err != nil {
		t.Fatal(err)
	}
	r := &racer{Device: e.c.Device(), b: e.c}
	a := client.New(r, e.keys)
	want := map[string][]byte{}

	r.races = 3
	if _, err := a.Put(ctx, "kv", []byte("a-0"), []byte("from A")); err != nil {
		t.Fatal(err)
	}
	want["a-0"] = []byte("from A")
	for i := range 3 {
		want[fmt.Sprintf("b-%d", i)] = []byte("from B")
	}
	if r.failed != nil || r.done != 3 {
		t.Fatalf("B: %d updates, %v", r.done, r.failed)
	}
	lookupAll(t, a, "kv", want)

	r.races = 1 << 20
	_, err := a.Put(ctx, "kv", []byte("a-1"), []byte("never"))
	if !errors.Is(err, client.ErrUpdateConflict) {
		t.Fatalf("an update that always loses: %v, want ErrUpdateConflict", err)
	}
	r.races = 0
	for i := 3; i < r.done; i++ {
		want[fmt.Sprintf("b-%d", i)] = []byte("from B")
	}
	if r.failed != nil || r.done < 4 {
		t.Fatalf("B: %d updates, %v", r.done, r.failed)
	}
	lookupAll(t, a, "kv", want, "a-1")
	checkNoOrphans(t, a, e.c) // e.c: the racer's writer

	// Two clients, 60 updates each, at once.
	b := client.New(e.c.Device(), e.keys)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for w, c := range []*client.Client{e.c, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				if _, err := c.Put(ctx, "kv", []byte(fmt.Sprintf("w%d-%d", w, i)), []byte{byte(w), byte(i)}); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	client.WaitCleanup(b)
	for w := range 2 {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v", w, errs[w])
		}
		for i := range 60 {
			want[fmt.Sprintf("w%d-%d", w, i)] = []byte{byte(w), byte(i)}
		}
	}
	lookupAll(t, e.c, "kv", want, "a-1")
	in, _ := e.c.Info(ctx, "kv")
	if in.Delta.Ops != len(want) {
		t.Fatalf("delta of %d operations, %d updates made", in.Delta.Ops, len(want))
	}
	checkNoOrphans(t, e.c, b)
}

// The bound is an option: past it an update fails with ErrDeltaFull and
// changes nothing; the default holds 10,000 updates of 256-byte values;
// a bound past the largest is refused at creation.
func TestKVDeltaBound(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	opts := client.KVOptions{LWEParams: "test", InsecureParams: true, MaxValue: 256, SlotData: 64}
	if _, err := e.c.CreateKV(ctx, "big", client.KVOptions{LWEParams: "test", InsecureParams: true, DeltaMax: client.MaxDeltaMax + 1}); err == nil {
		t.Fatal("a delta bound past MaxDeltaMax was accepted")
	}
	if _, err := e.c.CreateKV(ctx, "kv", opts); err != nil {
		t.Fatal(err)
	}
	// An update of a 16-byte key and a 256-byte value encodes to 289
	// bytes: the default bound takes 10,000 of them.
	value := bytes.Repeat([]byte{'v'}, 256)
	u, err := e.c.Put(ctx, "kv", []byte("key-000000000000"), value)
	if err != nil {
		t.Fatal(err)
	}
	if per := u.DeltaBytes - 4; per != 289 || 4+10000*per > client.DefaultDeltaMax {
		t.Fatalf("one update takes %d bytes; 10,000 take %d, the default bound is %d", per, 4+10000*per, client.DefaultDeltaMax)
	}
	opts.DeltaMax = 4 + 5*289
	if _, err := e.c.CreateKV(ctx, "small", opts); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := e.c.Put(ctx, "small", []byte(fmt.Sprintf("key-%012d", i)), value); err != nil {
			t.Fatalf("update %d of 5: %v", i, err)
		}
	}
	before, _ := e.c.Info(ctx, "small")
	_, err = e.c.Delete(ctx, "small", []byte("key-000000000000"))
	if !errors.Is(err, client.ErrDeltaFull) || !strings.Contains(err.Error(), fmt.Sprint(opts.DeltaMax)) {
		t.Fatalf("update past the bound: %v, want ErrDeltaFull naming %d", err, opts.DeltaMax)
	}
	after, _ := e.c.Info(ctx, "small")
	if after.Delta.Ops != 5 || !equalSegments(before.Delta, after.Delta) {
		t.Fatalf("a refused update changed the delta: %+v → %+v", before.Delta, after.Delta)
	}
}

func equalSegments(a, b *client.Delta) bool {
	return fmt.Sprint(a.Segments) == fmt.Sprint(b.Segments)
}

// heldDeletes holds every Delete until release is closed, counting those
// begun, in flight at once and finished.
type heldDeletes struct {
	api.Device
	release                  chan struct{}
	mu                       sync.Mutex
	begun, inFlight, maxOnce int
	finished                 int
}

func (h *heldDeletes) Delete(ctx context.Context, req *devicepb.DeleteRequest) (*devicepb.DeleteResponse, error) {
	h.mu.Lock()
	h.begun++
	h.inFlight++
	h.maxOnce = max(h.maxOnce, h.inFlight)
	h.mu.Unlock()
	<-h.release
	resp, err := h.Device.Delete(ctx, req)
	h.mu.Lock()
	h.inFlight--
	h.finished++
	h.mu.Unlock()
	return resp, err
}

// An update does not wait for the deletion of the segments it replaced:
// with every Delete held, 40 updates (carries retiring segments all
// along) return and each is visible; the deletions go one at a time (an
// update's write queues behind at most one), and once let through they
// leave exactly the segments the manifest lists.
func TestKVUpdateDoesNotWaitForCleanup(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.c.CreateKV(ctx, "kv", kvOpts); err != nil {
		t.Fatal(err)
	}
	h := &heldDeletes{Device: e.c.Device(), release: make(chan struct{})}
	c := client.New(h, e.keys)
	want := map[string][]byte{}
	updated := make(chan error)
	go func() {
		for i := range 40 {
			k, v := fmt.Sprintf("k%02d", i%25), []byte(fmt.Sprintf("v%d", i))
			if _, err := c.Put(ctx, "kv", []byte(k), v); err != nil {
				updated <- err
				return
			}
			want[k] = v
		}
		updated <- nil
	}()
	// A watchdog only: the updates above need no Delete to finish.
	select {
	case err := <-updated:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		close(h.release)
		t.Fatal("the updates waited for the held deletions")
	}
	h.mu.Lock()
	begun, finished, most := h.begun, h.finished, h.maxOnce
	h.mu.Unlock()
	if begun != 1 || finished != 0 || most != 1 {
		t.Fatalf("with deletions held: %d begun, %d finished, at most %d at once; want 1, 0, 1", begun, finished, most)
	}
	lookupAll(t, c, "kv", want, "k99")
	close(h.release)
	checkNoOrphans(t, c)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxOnce != 1 || h.finished < 30 {
		t.Fatalf("deletions: %d finished, at most %d at once; want ≥ 30 one at a time", h.finished, h.maxOnce)
	}
}

// updateBeforeSwap is a writer that never pauses, made deterministic:
// before each compare-and-swap of the manifest by the client it wraps (a
// compaction), writer b makes an update first unless a compaction's fence
// stands; under a fence b's update is started and waits.
type updateBeforeSwap struct {
	api.Device
	b        *client.Client
	mu       sync.Mutex
	raced    int // b's updates that went before a swap
	fenced   int // swaps under a fence
	waiting  sync.WaitGroup
	errs     []error
	nextWant int
}

func (u *updateBeforeSwap) Put(ctx context.Context, req *devicepb.PutRequest) (*devicepb.PutResponse, error) {
	if req.Name == "kv/head" && req.IfGeneration != nil {
		ls, err := u.Device.List(ctx, &devicepb.ListRequest{Prefix: "kv/head.fence"})
		if err != nil {
			return nil, err
		}
		u.mu.Lock()
		k := u.nextWant
		u.nextWant++
		put := func() {
			if _, err := u.b.Put(ctx, "kv", []byte(fmt.Sprintf("b-%d", k)), []byte("from b")); err != nil {
				u.mu.Lock()
				u.errs = append(u.errs, err)
				u.mu.Unlock()
			}
		}
		if len(ls.Objects) == 0 {
			u.raced++
			u.mu.Unlock()
			put()
		} else {
			u.fenced++
			u.mu.Unlock()
			u.waiting.Add(1)
			go func() { defer u.waiting.Done(); put() }()
		}
	}
	return u.Device.Put(ctx, req)
}

// A compaction against a writer that updates before every swap of the
// manifest publishes all the same: it loses once, raises its fence, and
// the next swap goes through while the writer's update waits; that update
// lands after it, in the new generation's delta, and none is lost. The
// fence is gone after.
func TestCompactionFencesUpdates(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	want, csv := kvData(7, 40)
	createKV(t, e.c, "kv", csv)
	if _, err := e.c.Put(ctx, "kv", []byte("before"), []byte("compaction")); err != nil {
		t.Fatal(err)
	}
	want["before"] = []byte("compaction")
	u := &updateBeforeSwap{Device: e.c.Device(), b: e.c}
	in, err := client.New(u, e.keys).Compact(ctx, "kv")
	if err != nil {
		t.Fatalf("compaction against a writer that never pauses: %v", err)
	}
	u.waiting.Wait()
	if len(u.errs) > 0 {
		t.Fatal(u.errs)
	}
	if u.raced != 1 || u.fenced != 1 || in.Generation != 2 {
		t.Fatalf("%d updates before a swap, %d swaps under the fence, generation %d; want 1, 1, 2", u.raced, u.fenced, in.Generation)
	}
	for k := range u.raced + u.fenced {
		want[fmt.Sprintf("b-%d", k)] = []byte("from b")
	}
	now, err := e.c.Info(ctx, "kv")
	if err != nil || now.Generation != 2 || now.Delta == nil || now.Delta.Ops != 2 {
		t.Fatalf("after: %+v, %v; want generation 2 with both of b's updates in its delta", now, err)
	}
	checkKV(t, e.c, "kv", want, "absent")
	if ls, err := e.c.Device().List(ctx, &devicepb.ListRequest{Prefix: "kv/head.fence"}); err != nil || len(ls.Objects) != 0 {
		t.Fatalf("the fence is left: %v, %v", ls, err)
	}
}
