package pirserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// scanBatcher answers the scans of queries that arrive together with one
// pass over the database: while a pass runs, new queries wait; the next
// pass takes every waiting query of the same generation at once (D times
// a matrix of query vectors, package fhe/matvec's batch kernel). Each
// query's vector and answer stay its own; only the reading is shared.
type scanBatcher struct{ waitQueue[*scanWait] }

// batcherTable holds a device's batchers of one kind (B, a pointer to S),
// one per database generation and shape (generationKey): queries of
// different callers batch together when they read the same stored
// objects.
type batcherTable[S any, B interface {
	*S
	idle() bool
}] struct {
	mu sync.Mutex
	m  map[string]B
}

// maxBatchers bounds a table; idle batchers are dropped beyond it.
const maxBatchers = 1024

// get returns the batcher of key, making one.
func (t *batcherTable[S, B]) get(key string) B {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]B{}
	}
	if b, ok := t.m[key]; ok {
		return b
	}
	if len(t.m) >= maxBatchers {
		for k, b := range t.m {
			if b.idle() {
				delete(t.m, k)
			}
		}
	}
	b := B(new(S))
	t.m[key] = b
	return b
}

// generationKey names what a query of generation gen under p and shape
// reads: its batchers' and its packer's key.
func generationKey(gen string, p lwepir.Params, shape lwepir.Shape) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%d\x00%d", gen, p.Name(), p.Packing, shape.Rows, shape.Cols, shape.RecordSize)
}

// maxScanBatch bounds the queries waiting for (and in) one pass; more are
// refused with admit.ErrBusy, as a full run queue is.
const maxScanBatch = api.MaxWaitingQueries

// scanWait is one query's place in a batch.
type scanWait struct {
	q      *matvec.Query
	src    lwepir.Tiles // its pinned tiles: a pass reads the first query's
	prefix string       // the tiles' prefix: a pass reads one generation
	caller string       // whose share of the cores a pass it leads takes
	done   chan struct{}
	col    []uint32
	err    error
	batch  int            // queries the pass answered
	use    admit.RunStats // how the pass used the cores
	// led: the pass read w's own source (the first query's); passBytes:
	// what it read, reported to every query it answered, so that a query
	// that joined another's pass reports the bytes read for it as the
	// first does (and every answer of a generation is one size).
	led       bool
	passBytes int64
}

// scan waits for the pass of ws, which enter the queue together (so that
// one pass answers them all unless the queue is cut by a pass's bound). A
// query whose context ends before its pass starts leaves the queue; one
// already in a pass waits for it (the pass may be reading its pinned
// objects), bounded by the device's run timeout.
func (b *scanBatcher) scan(ctx context.Context, s *Server, srv *lwepir.Server, ws []*scanWait) error {
	busy := func(pending []*scanWait) error {
		if len(pending) > 0 && len(pending)+len(ws) > maxScanBatch {
			return fmt.Errorf("%w: %d queries already wait for a scan", admit.ErrBusy, len(pending))
		}
		return nil
	}
	if err := b.enqueue(ws, busy, func() { b.run(s, srv) }); err != nil {
		return err
	}
	var err error
	for _, w := range ws {
		if e := b.await(ctx, w, w.done); e != nil {
			err = e
		} else if err == nil {
			err = w.err
		}
	}
	return err
}

// run makes passes until no query waits.
func (b *scanBatcher) run(s *Server, srv *lwepir.Server) {
	for {
		var prefix *string // the first query's: a pass reads one generation
		batch, ok := b.next(func(w *scanWait) bool {
			if prefix == nil {
				prefix = &w.prefix
			}
			return w.prefix == *prefix
		})
		if !ok {
			return
		}
		qs := make([]*matvec.Query, len(batch))
		for i, w := range batch {
			qs[i] = w.q
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RunTimeout)
		s.cfg.EnterISP()
		// The pass's blocks take cores as the first query's caller's
		// chunks: a batch is one pass, whoever joined it.
		run := s.cfg.Cores.For(batch[0].caller)
		tiles := batch[0].src
		var read func() int64
		if ls, ok := tiles.(*source); ok {
			tiles = passTiles{ls, run}
			before := ls.bytes.Load()
			read = func() int64 { return ls.bytes.Load() - before }
		}
		cols, err := srv.Scan(ctx, qs, tiles, run)
		var passBytes int64
		if read != nil {
			passBytes = read()
		}
		s.cfg.LeaveISP()
		cancel()
		use := run.Stats()
		clear(qs)
		for i, w := range batch {
			if err == nil {
				w.col = cols[i]
			}
			// The planes (4 bytes a column) are not needed once the pass
			// is over; the query may still wait for its ring stage.
			w.q = nil
			w.err, w.batch, w.use = err, len(batch), use
			w.led, w.passBytes = i == 0, passBytes
			close(w.done)
		}
	}
}
