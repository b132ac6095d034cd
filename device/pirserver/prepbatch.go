package pirserver

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// prepBatcher shares a packer's pass over its factors among the packed
// requests that wait together, as scanBatcher shares the pass over the
// tiles: while a Prepare runs, new requests' keys wait; the next Prepare
// takes every waiting request's keys at once (lwepir.Packer.Prepare reads
// each block of factors once for all of them, where one request at a time
// reads them once each: 64 MiB a query at 1 GiB in PackV3). Each query's
// keys and prepared half stay its own.
type prepBatcher struct {
	mu      sync.Mutex
	pending []*prepWait
	running bool
	// hold, if set (tests), runs before each Prepare of a batch.
	hold func()
}

// prepWait is one request's place in a batch.
type prepWait struct {
	pk     *lwepir.Packer // a batch is one packer's: the first request's
	keys   []*lwepir.PackingKeys
	caller string // whose share of the cores a Prepare it leads takes
	done   chan struct{}
	preps  []*lwepir.Prepared
	err    error
	batch  int            // the queries the Prepare took
	use    admit.RunStats // how it used the cores
}

// maxPrepBatch bounds the queries of one Prepare and of those waiting for
// it, as maxScanBatch bounds a pass; a request past it is refused with
// admit.ErrBusy.
const maxPrepBatch = api.MaxWaitingQueries

// idle reports whether no request waits for b or is in its Prepare.
func (b *prepBatcher) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.running && len(b.pending) == 0
}

// queued is the keys waiting. b.mu held.
func (b *prepBatcher) queued() int {
	n := 0
	for _, w := range b.pending {
		n += len(w.keys)
	}
	return n
}

// prepare waits for w's Prepare. A request whose context ends before its
// Prepare starts leaves the queue; one already in a Prepare waits for it
// (it reads the packer the request pinned), bounded by the run timeout.
func (b *prepBatcher) prepare(ctx context.Context, s *Server, w *prepWait) error {
	b.mu.Lock()
	if n := b.queued(); n > 0 && n+len(w.keys) > maxPrepBatch {
		b.mu.Unlock()
		return fmt.Errorf("%w: %d queries already wait for their packing", admit.ErrBusy, n)
	}
	b.pending = append(b.pending, w)
	if !b.running {
		b.running = true
		go b.run(s)
	}
	b.mu.Unlock()
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		b.mu.Lock()
		if i := slices.Index(b.pending, w); i >= 0 {
			b.pending = slices.Delete(b.pending, i, i+1)
			b.mu.Unlock()
			return ctx.Err()
		}
		b.mu.Unlock()
		<-w.done
		return ctx.Err()
	}
}

// run makes Prepares until no request waits: each takes the waiting
// requests of the first one's packer, in order, up to maxPrepBatch keys.
func (b *prepBatcher) run(s *Server) {
	for {
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		pk := b.pending[0].pk
		var batch, rest []*prepWait
		n := 0
		for _, w := range b.pending {
			if w.pk == pk && (len(batch) == 0 || n+len(w.keys) <= maxPrepBatch) {
				batch, n = append(batch, w), n+len(w.keys)
			} else {
				rest = append(rest, w)
			}
		}
		b.pending = rest
		b.mu.Unlock()
		if b.hold != nil {
			b.hold()
		}
		keys := make([]*lwepir.PackingKeys, 0, n)
		for _, w := range batch {
			keys = append(keys, w.keys...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RunTimeout)
		// The Prepare's chunks take cores as the first request's caller's,
		// as a shared scan pass does.
		run := s.cfg.Cores.For(batch[0].caller)
		var preps []*lwepir.Prepared
		err := faultsAsErrors(func() (err error) {
			preps, err = pk.Prepare(ctx, keys, s.cfg.Workers, run)
			return err
		})
		cancel()
		use := run.Stats()
		off := 0
		for _, w := range batch {
			if err == nil {
				w.preps = preps[off : off+len(w.keys) : off+len(w.keys)]
			}
			off += len(w.keys)
			w.err, w.batch, w.use = err, n, use
			w.pk = nil
			close(w.done)
		}
	}
}
