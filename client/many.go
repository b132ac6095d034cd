package client

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"

	"github.com/rosemary-fhe/rosemary/client/internal/seal"
	"github.com/rosemary-fhe/rosemary/client/internal/session"
	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
)

// Many queries at once: a device answers the scans of the LWE queries that
// wait together with one pass over the database (package device/pirserver), so
// k queries in flight cost about k/inFlight passes instead of k. A device
// runs one query's own ring stage per caller at a time and queues a few
// more (admit's per-caller limits); more would be refused, so a client
// keeps manyInFlight queries in flight and retries one the device found
// busy.

// manyInFlight is the queries one call keeps in flight: what a device
// queues per caller (admit.Limits.MaxWaitingPerCaller, 4) beside the one
// it runs.
const manyInFlight = 5

// queryCost sums what a batch of queries cost.
type queryCost struct {
	query, answer int64
	device        float64 // device seconds, as each answer reports them
}

// GetMany returns records indices of PIR database name, asked at once (see
// LookupMany). The device learns neither the indices nor which repeat.
func (c *Client) GetMany(ctx context.Context, name string, indices []int) ([][]byte, error) {
	return retryGeneration(ctx, c, name, func(in *Info) ([][]byte, error) {
		if in.Kind != KindPIR {
			return nil, fmt.Errorf("%w: %q is a %s database, GetMany reads PIR databases", ErrKind, name, in.Kind)
		}
		if in.Records == 0 {
			return nil, fmt.Errorf("%w: %q", ErrEmpty, name)
		}
		for _, i := range indices {
			if i < 0 || i >= in.Records {
				return nil, fmt.Errorf("client: get %s: %w: index %d of %d records", name, ErrIndexOutOfRange, i, in.Records)
			}
		}
		ops, err := c.deltaOps(ctx, in)
		if err != nil {
			return nil, err
		}
		var recs [][]byte
		if in.scheme() == SchemeLWE {
			asked := make([]int, len(indices))
			for k, i := range indices {
				asked[k] = in.asked(i)
			}
			if recs, _, err = c.fetchRecords(ctx, in, asked); err != nil {
				return nil, err
			}
		} else {
			for _, i := range indices {
				q, err := c.getIn(ctx, in, i)
				if err != nil {
					return nil, err
				}
				recs = append(recs, q.Record)
			}
		}
		for k, i := range indices {
			if recs[k], err = fromDelta(in, ops, i, recs[k]); err != nil {
				return nil, err
			}
		}
		return recs, nil
	})
}

// asked is the index a query for record index of in asks the device: the
// index itself, or for an appended record (in the delta, not in the
// generation) a random record of the generation, so that the device sees
// the same query whichever it is.
func (in *Info) asked(index int) int {
	if n := in.genRecords(); index >= n && n > 0 {
		return mrand.IntN(n)
	}
	return index
}

// fromDelta is record index: the delta's latest set of it if any, else
// rec, the generation's (an appended record must be in the delta).
func fromDelta(in *Info, ops []kv.Op, index int, rec []byte) ([]byte, error) {
	if op := kv.LastIndex(ops, int64(index)); op != nil {
		return padRecord(op.Value, in.pir().RecordSize), nil
	}
	if index >= in.genRecords() {
		return nil, fmt.Errorf("client: get %s[%d]: the manifest lists an appended record the delta does not hold", in.Name, index)
	}
	return rec, nil
}

// padRecord is a record set by Set, zero-padded to the record size.
func padRecord(v []byte, size int) []byte {
	out := make([]byte, size)
	copy(out, v)
	return out
}

// fetchRecords reads records indices of LWE generation in, opened, with
// manyInFlight queries in flight.
func (c *Client) fetchRecords(ctx context.Context, in *Info, indices []int) ([][]byte, queryCost, error) {
	var cost queryCost
	s, err := c.lweSession(ctx, in)
	if err != nil {
		return nil, cost, err
	}
	sl, err := c.sealer(ctx, in)
	if err != nil {
		return nil, cost, err
	}
	return fetchOpened(ctx, s, sl, indices, func(k int, err error, failed bool) error {
		if failed {
			return c.answerFailed(in, indices[k], err)
		}
		return fmt.Errorf("client: get %s[%d]: %w", in.Name, indices[k], err)
	})
}

// fetchOpened reads records indices of session s, each opened by sl, in
// requests of up to s.Batch() queries (the packed mode's requests carry
// several; the indices are cut in requests of even sizes), manyInFlight
// requests in flight. The first request that fails ends the call with
// wrap(k, err, failed), k the index of its first query (or of the record
// that did not open): failed is true where an answer did not decode or
// open (altered, moved, of another generation), which is fatal for the
// key; the requests still in flight are cancelled.
func fetchOpened(ctx context.Context, s *session.LWESession, sl *seal.Sealer, indices []int, wrap func(k int, err error, failed bool) error) ([][]byte, queryCost, error) {
	var cost queryCost
	out := make([][]byte, len(indices))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	requests := (len(indices) + s.Batch() - 1) / s.Batch()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		next     int
	)
	// Requests past the device's bound on waiting queries would be refused
	// busy, resent after a pause, their uploads wasted.
	for range max(1, min(manyInFlight, requests, api.MaxWaitingQueries/s.Batch())) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				r := next
				next++
				mu.Unlock()
				if r >= requests {
					return
				}
				lo, hi := r*len(indices)/requests, (r+1)*len(indices)/requests
				qs, err := getManyRetryBusy(ctx, s, indices[lo:hi])
				k, failed := lo, errors.Is(err, session.ErrMalformedAnswer)
				for i := 0; err == nil && i < len(qs); i++ {
					// A record the device altered, moved or kept from
					// another generation fails here.
					k = lo + i
					out[k], err = sl.Open(nil, uint64(indices[k]), qs[i].Record)
					failed = err != nil
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = wrap(k, err, failed)
						cancel()
					}
				} else {
					for _, q := range qs {
						cost.query += q.QueryBytes
						cost.answer += q.AnswerBytes
						cost.device += q.Device.Seconds
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, cost, firstErr
}

// getManyRetryBusy asks one request of queries (session.GetMany), again
// after a pause while the device's queue for this caller is full.
func getManyRetryBusy(ctx context.Context, s *session.LWESession, indices []int) ([]*session.PIRQuery, error) {
	var qs []*session.PIRQuery
	err := api.RetryBusy(ctx, func() error {
		var err error
		qs, err = s.GetMany(ctx, indices)
		return err
	})
	return qs, err
}
