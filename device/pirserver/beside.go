package pirserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// scanBeside runs the batched scan of queries over src (one pass: they
// enter the generation's batcher together) and, on a goroutine of its own,
// their stage (the ring stage or the packing's half that needs no column,
// named kind in the cores it reports, on run's cores), both under the
// device's run timeout. A side that fails cancels the other, and the
// error returned is the cause (lwepir.ErrParams as a malformed request).
// It returns the scan's columns, the cores both used (the stage's first)
// and the bytes read from the store for the queries: their source's reads
// and, where their scan joined another request's pass, that pass's.
func (s *Server) scanBeside(ctx context.Context, caller string, p lwepir.Params, shape lwepir.Shape, srv *lwepir.Server, src *source,
	queries [][]uint32, gen, kind string, run *admit.Run, stage func(context.Context) error) ([][]uint32, []*devicepb.CoreUse, uint64, error) {
	var (
		stageErr error
		stageUse *devicepb.CoreUse
		wg       sync.WaitGroup
		from     = time.Now()
	)
	sctx, cancel := context.WithTimeout(ctx, s.cfg.RunTimeout)
	defer cancel()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { stageUse = CoreUse(kind, time.Since(from), run.Stats(), 1) }()
		if stageErr = stage(sctx); stageErr != nil {
			cancel()
		}
	}()
	ws := make([]*scanWait, len(queries))
	for i, q := range queries {
		ws[i] = &scanWait{q: matvec.NewQuery(q), src: src, prefix: gen, caller: caller, done: make(chan struct{})}
	}
	batcher := s.batchers.get(generationKey(gen, p, shape))
	scanErr := batcher.scan(sctx, s, srv, ws)
	w := ws[0]
	scanUse := CoreUse("scan", time.Since(from), w.use, w.batch)
	if scanErr != nil {
		cancel()
	}
	wg.Wait()
	// A side that fails cancels the other: report the cause.
	err := stageErr
	if err == nil || (scanErr != nil && errors.Is(err, context.Canceled)) {
		err = scanErr
	}
	if err != nil {
		if errors.Is(err, lwepir.ErrParams) {
			return nil, nil, 0, malformed("%v", err)
		}
		return nil, nil, 0, fmt.Errorf("device: querylwe: %w", err)
	}
	read := src.bytes.Load()
	if !w.led {
		read += w.passBytes
	}
	cols := make([][]uint32, len(ws))
	for i, w := range ws {
		cols[i] = w.col
	}
	return cols, []*devicepb.CoreUse{stageUse, scanUse}, uint64(read), nil
}
