package admit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// acquireAsync starts an Acquire and returns a channel that yields its
// release function once admitted (or nil on error).
func acquireAsync(ctx context.Context, q *Queue, caller string) <-chan func() {
	ch := make(chan func(), 1)
	go func() {
		rel, err := q.Acquire(ctx, caller)
		if err != nil {
			ch <- nil
			return
		}
		ch <- rel
	}()
	return ch
}

// waitFor polls until the queue holds n waiters.
func waitFor(t *testing.T, q *Queue, n int) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if q.Stats().Waiting == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("queue has %d waiters, want %d", q.Stats().Waiting, n)
}

func TestCallersTakeTurns(t *testing.T) {
	q := New(Limits{Slots: 1, PerCaller: 1})
	ctx := context.Background()
	relA, err := q.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	a2 := acquireAsync(ctx, q, "a")
	waitFor(t, q, 1)
	b := acquireAsync(ctx, q, "b")
	waitFor(t, q, 2)
	relA()
	// b queued after a's second run, yet goes first: a just had its turn.
	select {
	case rel := <-b:
		if rel == nil {
			t.Fatal("b refused")
		}
		select {
		case <-a2:
			t.Fatal("a's second run started while b runs in the only slot")
		case <-time.After(20 * time.Millisecond):
		}
		rel()
	case <-a2:
		t.Fatal("a ran twice in a row while b waited")
	}
	if rel := <-a2; rel == nil {
		t.Fatal("a's second run refused")
	} else {
		rel()
	}
	if s := q.Stats(); s != (Stats{}) {
		t.Fatalf("queue not empty: %+v", s)
	}
}

func TestShortRunStartsBesideLongOne(t *testing.T) {
	q := New(Limits{Slots: 2, PerCaller: 1})
	ctx := context.Background()
	relA, err := q.Acquire(ctx, "heavy")
	if err != nil {
		t.Fatal(err)
	}
	// heavy is at its share: its next run waits though a slot is free.
	next := acquireAsync(ctx, q, "heavy")
	waitFor(t, q, 1)
	// light starts at once, in the free slot.
	relB, err := q.Acquire(ctx, "light")
	if err != nil {
		t.Fatal(err)
	}
	relB()
	relA()
	if rel := <-next; rel == nil {
		t.Fatal("heavy's next run refused")
	} else {
		rel()
	}
}

func TestFullQueueRefusesAtOnce(t *testing.T) {
	q := New(Limits{Slots: 1, PerCaller: 1, MaxWaiting: 2, MaxWaitingPerCaller: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rel, err := q.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	acquireAsync(ctx, q, "a")
	waitFor(t, q, 1)
	if _, err := q.Acquire(ctx, "a"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a's second waiter: %v, want ErrBusy", err)
	}
	acquireAsync(ctx, q, "b")
	waitFor(t, q, 2)
	if _, err := q.Acquire(ctx, "c"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third waiter over MaxWaiting 2: %v, want ErrBusy", err)
	}
}

func TestCancelledWaiterLeaves(t *testing.T) {
	q := New(Limits{Slots: 1})
	rel, _ := q.Acquire(context.Background(), "a")
	ctx, cancel := context.WithCancel(context.Background())
	w := acquireAsync(ctx, q, "b")
	waitFor(t, q, 1)
	cancel()
	if r := <-w; r != nil {
		t.Fatal("a cancelled waiter was admitted")
	}
	if s := q.Stats(); s.Waiting != 0 || s.Running != 1 {
		t.Fatalf("after the cancel: %+v", s)
	}
	rel()
	rel() // a second call is a no-op
	if s := q.Stats(); s != (Stats{}) {
		t.Fatalf("after release: %+v", s)
	}
	if r, err := q.Acquire(context.Background(), "c"); err != nil {
		t.Fatal(err)
	} else {
		r()
	}
}

// TestLimitsHoldUnderLoad runs many callers at once and checks, inside
// every run, that no limit is exceeded and that every run ends.
func TestLimitsHoldUnderLoad(t *testing.T) {
	lim := Limits{Slots: 3, PerCaller: 2, MaxWaiting: 1000, MaxWaitingPerCaller: 100}
	q := New(lim)
	var total atomic.Int32
	var mu sync.Mutex
	per := map[string]int{}
	var wg sync.WaitGroup
	var runs atomic.Int32
	for c := 0; c < 6; c++ {
		caller := string(rune('a' + c))
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rel, err := q.Acquire(context.Background(), caller)
				if err != nil {
					t.Error(err)
					return
				}
				if n := total.Add(1); n > int32(lim.Slots) {
					t.Errorf("%d runs at once", n)
				}
				mu.Lock()
				per[caller]++
				if per[caller] > lim.PerCaller {
					t.Errorf("%s has %d runs", caller, per[caller])
				}
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				per[caller]--
				mu.Unlock()
				total.Add(-1)
				runs.Add(1)
				rel()
			}()
		}
	}
	wg.Wait()
	if runs.Load() != 120 {
		t.Fatalf("%d of 120 runs", runs.Load())
	}
	if s := q.Stats(); s != (Stats{}) {
		t.Fatalf("queue not empty: %+v", s)
	}
}
