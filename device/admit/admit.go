// Package admit decides when a device starts a run: a bounded number at
// once, a bounded queue behind them, and a fair share per caller.
//
// A caller that loops long runs must not starve another's short one: each
// caller has at most PerCaller runs going, waiting callers are served in
// turn (round robin over callers, first in first out within one), and a
// caller may queue at most MaxWaitingPerCaller runs. With Slots above
// PerCaller a short run starts beside a long one instead of behind it;
// they share the cores. A full queue refuses at once (ErrBusy) rather
// than holding a connection without bound, and a waiter whose context
// ends leaves the queue.
//
// Once runs go, Cores shares the device's cores between them chunk by
// chunk (cores.go): the run with the least service first, no caller
// starved.
package admit

import (
	"context"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/api"
)

// Limits bound the queue.
type Limits struct {
	Slots               int // runs at once (≥ 1)
	PerCaller           int // runs at once per caller (≥ 1, ≤ Slots)
	MaxWaiting          int // runs waiting, all callers
	MaxWaitingPerCaller int // runs waiting per caller
}

// ErrBusy is returned when the queue is full, for everyone or for the
// caller. It wraps api.ErrBusy, the device's one "busy" error (gRPC
// ResourceExhausted, reason BUSY), so callers test for that.
var ErrBusy = fmt.Errorf("admit: the device's run queue is full: %w", api.ErrBusy)

// Queue admits runs. Safe for concurrent use.
type Queue struct {
	lim Limits

	mu      sync.Mutex
	running map[string]int
	total   int
	waiting map[string][]chan struct{}
	nWait   int
	turn    []string // callers with waiters, in the order they queued
	// served is when each caller with runs going or waiting last started
	// one (a clock of starts): the waiter served longest ago goes next.
	served map[string]uint64
	clock  uint64
}

// New returns a queue with lim (zero fields take 1, 1, 64 and 4).
func New(lim Limits) *Queue {
	if lim.Slots < 1 {
		lim.Slots = 1
	}
	if lim.PerCaller < 1 || lim.PerCaller > lim.Slots {
		lim.PerCaller = min(max(lim.PerCaller, 1), lim.Slots)
	}
	if lim.MaxWaiting < 1 {
		lim.MaxWaiting = 64
	}
	if lim.MaxWaitingPerCaller < 1 {
		lim.MaxWaitingPerCaller = 4
	}
	return &Queue{lim: lim, running: map[string]int{}, waiting: map[string][]chan struct{}{}, served: map[string]uint64{}}
}

// Acquire waits for caller's turn and returns the function that ends the
// run (call it exactly once).
func (q *Queue) Acquire(ctx context.Context, caller string) (release func(), err error) {
	q.mu.Lock()
	if len(q.waiting[caller]) == 0 && q.canRun(caller) && !q.othersWaitFor(caller) {
		q.start(caller)
		q.mu.Unlock()
		return q.releaser(caller), nil
	}
	if q.nWait >= q.lim.MaxWaiting {
		q.mu.Unlock()
		return nil, fmt.Errorf("%w (%d runs waiting)", ErrBusy, q.nWait)
	}
	if len(q.waiting[caller]) >= q.lim.MaxWaitingPerCaller {
		q.mu.Unlock()
		return nil, fmt.Errorf("%w for %s (%d of its runs waiting)", ErrBusy, caller, len(q.waiting[caller]))
	}
	ch := make(chan struct{})
	if len(q.waiting[caller]) == 0 {
		q.turn = append(q.turn, caller)
	}
	q.waiting[caller] = append(q.waiting[caller], ch)
	q.nWait++
	q.mu.Unlock()

	select {
	case <-ch:
		return q.releaser(caller), nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		select {
		case <-ch:
			// Admitted as the context ended: give the slot back.
			q.finish(caller)
		default:
			q.remove(caller, ch)
		}
		return nil, ctx.Err()
	}
}

// canRun reports whether caller may start a run now (mu held).
func (q *Queue) canRun(caller string) bool {
	return q.total < q.lim.Slots && q.running[caller] < q.lim.PerCaller
}

// othersWaitFor reports whether a waiting caller could take the free slot
// caller wants: then caller queues behind it (mu held).
func (q *Queue) othersWaitFor(caller string) bool {
	for _, c := range q.turn {
		if c != caller && q.running[c] < q.lim.PerCaller {
			return true
		}
	}
	return false
}

func (q *Queue) start(caller string) {
	q.running[caller]++
	q.total++
	q.clock++
	q.served[caller] = q.clock
}

// forget drops what the queue knows of an idle caller (mu held).
func (q *Queue) forget(caller string) {
	if q.running[caller] == 0 && len(q.waiting[caller]) == 0 {
		delete(q.running, caller)
		delete(q.waiting, caller)
		delete(q.served, caller)
	}
}

func (q *Queue) releaser(caller string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.finish(caller)
			q.mu.Unlock()
		})
	}
}

// finish ends one of caller's runs and admits waiters in turn (mu held).
func (q *Queue) finish(caller string) {
	q.running[caller]--
	q.total--
	q.admit()
	q.forget(caller)
}

// admit starts waiting runs while slots are free: of the waiting callers
// below their share, the one served longest ago (ties: the first queued)
// (mu held).
func (q *Queue) admit() {
	for q.total < q.lim.Slots {
		next := -1
		for i, c := range q.turn {
			if q.running[c] < q.lim.PerCaller && (next < 0 || q.served[c] < q.served[q.turn[next]]) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		c := q.turn[next]
		ch := q.waiting[c][0]
		q.waiting[c] = q.waiting[c][1:]
		q.nWait--
		if len(q.waiting[c]) == 0 {
			q.turn = append(q.turn[:next], q.turn[next+1:]...)
		}
		q.start(c)
		close(ch)
	}
}

// remove drops a waiter whose context ended (mu held).
func (q *Queue) remove(caller string, ch chan struct{}) {
	w := q.waiting[caller]
	for i, x := range w {
		if x == ch {
			q.waiting[caller] = append(w[:i], w[i+1:]...)
			q.nWait--
			break
		}
	}
	if len(q.waiting[caller]) == 0 {
		for i, c := range q.turn {
			if c == caller {
				q.turn = append(q.turn[:i], q.turn[i+1:]...)
				break
			}
		}
	}
	q.forget(caller)
}

// Stats is the queue's state.
type Stats struct {
	Running, Waiting int
}

// Stats returns the queue's state now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Stats{Running: q.total, Waiting: q.nWait}
}
