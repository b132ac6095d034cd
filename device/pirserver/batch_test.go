package pirserver

import (
	"context"
	"crypto/rand"
	"runtime"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// gatedTiles is an in-memory database whose first read waits for a signal,
// so a test can hold a pass while more queries arrive.
type gatedTiles struct {
	lwepir.MemTiles
	gate chan struct{}
}

func (g *gatedTiles) VisitBlock(ctx context.Context, k, b int, f func(row int, rows []byte)) error {
	if g.gate != nil {
		<-g.gate
		g.gate = nil
	}
	return g.MemTiles.VisitBlock(ctx, k, b, f)
}

// Queries that arrive while a pass runs are answered together by the next
// pass, each with its own product, equal to the product alone.
func TestScanBatcherBatchesWaitingQueries(t *testing.T) {
	p := lwepir.Test()
	shape := lwepir.Shape{Rows: 64, Cols: p.N(), RecordSize: 64}
	srv, err := lwepir.NewServer(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	srv.Workers = 1
	tile := make([]byte, shape.TileBytes(p))
	rand.Read(tile)
	tiles := &gatedTiles{MemTiles: lwepir.MemTiles{tile}, gate: make(chan struct{})}
	st, err := store.Open(t.TempDir(), layout.Layout{Channels: 1, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(Config{Store: st, Runs: admit.New(admit.Limits{Slots: 1}), Cores: admit.NewCores(1), Workers: 1, RunTimeout: time.Minute, EnterISP: func() {}, LeaveISP: func() {}})
	var b scanBatcher
	queries := map[*scanWait]*matvec.Query{} // the queries the batcher lets go of
	newWait := func(seed byte) *scanWait {
		q := make([]uint32, shape.Cols)
		for i := range q {
			q[i] = uint32(i)*2654435761 + uint32(seed)
		}
		w := &scanWait{q: matvec.NewQuery(q), src: tiles, prefix: "db/g1/lwe/t", done: make(chan struct{})}
		queries[w] = w.q
		return w
	}
	ctx := context.Background()
	first := newWait(1)
	errs := make(chan error, 3)
	go func() { errs <- b.scan(ctx, s, srv, []*scanWait{first}) }()
	// The first pass is held at its first read; queue two more.
	for {
		b.mu.Lock()
		started := b.running && len(b.pending) == 0
		b.mu.Unlock()
		if started {
			break
		}
		runtime.Gosched()
	}
	second, third := newWait(2), newWait(3)
	go func() { errs <- b.scan(ctx, s, srv, []*scanWait{second}) }()
	go func() { errs <- b.scan(ctx, s, srv, []*scanWait{third}) }()
	for {
		b.mu.Lock()
		n := len(b.pending)
		b.mu.Unlock()
		if n == 2 {
			break
		}
		runtime.Gosched()
	}
	close(tiles.gate)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if first.batch != 1 || second.batch != 2 || third.batch != 2 {
		t.Fatalf("batches %d, %d, %d; want 1, 2, 2", first.batch, second.batch, third.batch)
	}
	// One query of each pass led it (its source was read); the other
	// reports the pass's reads as its own.
	if !first.led || second.led == third.led {
		t.Fatalf("led: %v, %v, %v; want the first and one of the others", first.led, second.led, third.led)
	}
	for _, w := range []*scanWait{first, second, third} {
		if w.q != nil {
			t.Fatal("a query's digit planes are held after its pass")
		}
		alone, err := srv.Scan(ctx, []*matvec.Query{queries[w]}, lwepir.MemTiles{tile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range alone[0] {
			if alone[0][i] != w.col[i] {
				t.Fatalf("row %d: batched %d, alone %d", i, w.col[i], alone[0][i])
			}
		}
	}
}
