package pirserver

import (
	"context"
	"slices"
	"sync"
)

// waitQueue is what a batcher (scanBatcher, prepBatcher) keeps of the work
// waiting for its runner: entries queue while a batch runs, one runner
// goroutine takes the next batch whenever the last one ends, and stops
// when none waits.
type waitQueue[W comparable] struct {
	mu      sync.Mutex
	pending []W
	running bool
}

// idle reports whether nothing waits and no batch runs.
func (q *waitQueue[W]) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.running && len(q.pending) == 0
}

// enqueue queues ws unless busy, given what waits, refuses them, and
// starts run (in its own goroutine) if no runner is on.
func (q *waitQueue[W]) enqueue(ws []W, busy func(pending []W) error, run func()) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := busy(q.pending); err != nil {
		return err
	}
	q.pending = append(q.pending, ws...)
	if !q.running {
		q.running = true
		go run()
	}
	return nil
}

// await waits until done is closed, or until ctx ends: then w leaves the
// queue if it still waits there; if a batch already took it, await waits
// for that batch (it may be reading what w pinned), which the runner
// bounds. It returns ctx's error if ctx ended first.
func (q *waitQueue[W]) await(ctx context.Context, w W, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		if i := slices.Index(q.pending, w); i >= 0 {
			q.pending = slices.Delete(q.pending, i, i+1)
			q.mu.Unlock()
			return ctx.Err()
		}
		q.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// next takes the next batch: the waiting entries, in order, that take
// accepts (called once an entry, first the first's; it may keep count),
// leaving the others queued. With nothing waiting it marks the runner
// stopped and reports false.
func (q *waitQueue[W]) next(take func(W) bool) ([]W, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		q.running = false
		return nil, false
	}
	var batch, rest []W
	for _, w := range q.pending {
		if take(w) {
			batch = append(batch, w)
		} else {
			rest = append(rest, w)
		}
	}
	q.pending = rest
	return batch, true
}
