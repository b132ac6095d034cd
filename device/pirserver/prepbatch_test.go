package pirserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// Requests that arrive while a Prepare runs are prepared together by the
// next one, each query's half equal to its Prepare alone (compared through
// the answer it completes, byte for byte); one past the bound is refused
// busy, and one whose context ends while it waits leaves the queue.
func TestPrepBatcherBatchesWaitingRequests(t *testing.T) {
	p := lwepir.Test()
	shape := lwepir.Shape{Rows: 2*p.N() + 3, Cols: p.N(), RecordSize: 8}
	h := make([]uint32, shape.Rows*p.N())
	for i := range h {
		h[i] = uint32(i)*2654435761 + 9
	}
	var seed [lwepir.SeedSize]byte
	rand.Read(seed[:])
	ctx := context.Background()
	pk, err := lwepir.NewPacker(ctx, p, shape, seed, h)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := lwepir.NewPackedClient(p, shape, seed)
	if err != nil {
		t.Fatal(err)
	}
	keysOf := func(n int) []*lwepir.PackingKeys {
		var out []*lwepir.PackingKeys
		for range n {
			q, _, err := cl.PackedQuery(0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, q.Keys)
		}
		return out
	}
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 1, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(Config{Store: st, Runs: admit.New(admit.Limits{Slots: 1}), Cores: admit.NewCores(1), Workers: 1, RunTimeout: time.Minute, EnterISP: func() {}, LeaveISP: func() {}})
	held := make(chan struct{})
	var b prepBatcher
	b.hold = func() {
		if held != nil {
			<-held
			held = nil
		}
	}
	newWait := func(n int, caller string) *prepWait {
		return &prepWait{pk: pk, keys: keysOf(n), caller: caller, done: make(chan struct{})}
	}
	first, second, third := newWait(1, "alice"), newWait(2, "bob"), newWait(1, "carol")
	errs := make(chan error, 3)
	go func() { errs <- b.prepare(ctx, s, first) }()
	// The first Prepare is held before it starts; queue two more.
	waitFor := func(cond func() bool) { untilQueue(&b.waitQueue, cond, runtime.Gosched) }
	waitFor(func() bool { return b.running && len(b.pending) == 0 })
	go func() { errs <- b.prepare(ctx, s, second) }()
	go func() { errs <- b.prepare(ctx, s, third) }()
	waitFor(func() bool { return len(b.pending) == 2 })
	// Past the bound: refused busy, nothing queued.
	if err := b.prepare(ctx, s, newWait(maxPrepBatch, "mallory")); !errors.Is(err, admit.ErrBusy) {
		t.Fatalf("a request past the bound: %v, want ErrBusy", err)
	}
	// A request whose context ends while it waits leaves the queue.
	cctx, cancel := context.WithCancel(ctx)
	gone := newWait(1, "dave")
	left := make(chan error, 1)
	go func() { left <- b.prepare(cctx, s, gone) }()
	waitFor(func() bool { return len(b.pending) == 3 })
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	close(held)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if first.batch != 1 || second.batch != 3 || third.batch != 3 {
		t.Fatalf("batches %d, %d, %d; want 1, 3, 3", first.batch, second.batch, third.batch)
	}
	column := make([]uint32, shape.Rows)
	for _, w := range []*prepWait{first, second, third} {
		if len(w.preps) != len(w.keys) || w.pk != nil {
			t.Fatalf("%d prepared halves for %d queries (packer released: %v)", len(w.preps), len(w.keys), w.pk == nil)
		}
		alone, err := pk.Prepare(ctx, w.keys, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range w.keys {
			got, err1 := pk.Finish(w.preps[i], 7, column)
			want, err2 := pk.Finish(alone[i], 7, column)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			gb, _ := lwepir.MarshalPackedAnswer(p, shape, got)
			wb, _ := lwepir.MarshalPackedAnswer(p, shape, want)
			if !bytes.Equal(gb, wb) {
				t.Fatalf("query %d of a batched request: its prepared half differs from its Prepare alone", i)
			}
		}
	}
}

// untilQueue calls between until cond, checked under q's lock, holds.
func untilQueue[W comparable](q *waitQueue[W], cond func() bool, between func()) {
	for {
		q.mu.Lock()
		ok := cond()
		q.mu.Unlock()
		if ok {
			return
		}
		between()
	}
}
