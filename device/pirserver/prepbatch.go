package pirserver

import (
	"context"
	"fmt"

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
	waitQueue[*prepWait]
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

// queued is the keys of the requests in pending.
func queued(pending []*prepWait) int {
	n := 0
	for _, w := range pending {
		n += len(w.keys)
	}
	return n
}

// prepare waits for w's Prepare. A request whose context ends before its
// Prepare starts leaves the queue; one already in a Prepare waits for it
// (it reads the packer the request pinned), bounded by the run timeout.
func (b *prepBatcher) prepare(ctx context.Context, s *Server, w *prepWait) error {
	busy := func(pending []*prepWait) error {
		if n := queued(pending); n > 0 && n+len(w.keys) > maxPrepBatch {
			return fmt.Errorf("%w: %d queries already wait for their packing", admit.ErrBusy, n)
		}
		return nil
	}
	if err := b.enqueue([]*prepWait{w}, busy, func() { b.run(s) }); err != nil {
		return err
	}
	if err := b.await(ctx, w, w.done); err != nil {
		return err
	}
	return w.err
}

// run makes Prepares until no request waits: each takes the waiting
// requests of the first one's packer, in order, up to maxPrepBatch keys.
func (b *prepBatcher) run(s *Server) {
	for {
		var pk *lwepir.Packer
		n := 0
		batch, ok := b.next(func(w *prepWait) bool {
			if pk == nil {
				pk = w.pk
			}
			if w.pk != pk || (n > 0 && n+len(w.keys) > maxPrepBatch) {
				return false
			}
			n += len(w.keys)
			return true
		})
		if !ok {
			return
		}
		if b.hold != nil {
			b.hold()
		}
		keys := make([]*lwepir.PackingKeys, 0, n)
		for _, w := range batch {
			keys = append(keys, w.keys...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RunTimeout)
		// The Prepare takes one run slot and its chunks take cores as the
		// first request's caller's, as a shared scan pass does.
		run := s.cfg.Cores.For(batch[0].caller)
		var preps []*lwepir.Prepared
		release, err := s.cfg.Runs.Acquire(ctx, batch[0].caller)
		if err == nil {
			err = faultsAsErrors(func() (err error) {
				preps, err = pk.Prepare(ctx, keys, s.cfg.Workers, run)
				return err
			})
			release()
		}
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
