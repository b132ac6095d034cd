package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/cluster"
	"github.com/rosemary-fhe/rosemary/device/api"
)

// hangSlack: a query still running this long after its deadline is a hang
// (an anomaly), whatever the machine's load.
const hangSlack = time.Minute

// load publishes a new generation of new data (why names it in the
// counts); nil: the load was acknowledged.
func (r *run) load(ctx context.Context, why string) error {
	r.mu.Lock()
	a := &attempt{id: len(r.history.attempts)}
	a.data = attemptData(r.cfg.Seed, a.id, r.cfg.Records, r.cfg.RecordSize)
	r.history.attempts = append(r.history.attempts, a)
	a.start = time.Now()
	r.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	m, err := r.c.Load(lctx, dbName, bytes.NewReader(a.data), dataset.FixedSize)
	r.mu.Lock()
	a.end = time.Now()
	if err == nil {
		a.generation = m.Generation
	}
	r.mu.Unlock()
	if err != nil {
		switch class := errorClass(err); {
		case ctx.Err() != nil:
			r.countIn(r.rep.Loads, why+": stopped with the run")
		case class == "":
			r.anomaly("a load (%s) failed with an unnamed error: %v", why, err)
		default:
			r.countIn(r.rep.Loads, why+": failed: "+class)
		}
		return err
	}
	r.countIn(r.rep.Loads, why+": published")
	return nil
}

// query asks c for random records until ctx ends, holding each answer to
// account (check).
func (r *run) query(ctx context.Context, c *cluster.Client, rng *rand.Rand) {
	type result struct {
		a   *cluster.Answer
		err error
	}
	for ctx.Err() == nil {
		i := rng.IntN(r.cfg.Records)
		done := make(chan result, 1)
		start := time.Now()
		go func() {
			qctx, cancel := context.WithTimeout(ctx, r.cfg.QueryDeadline)
			defer cancel()
			a, err := c.Get(qctx, dbName, i)
			done <- result{a, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(r.cfg.QueryDeadline + hangSlack):
			r.anomaly("query %d hung: no answer %v after its deadline", i, hangSlack)
			return
		}
		end := time.Now()
		r.mu.Lock()
		r.rep.LongestQueryS = max(r.rep.LongestQueryS, end.Sub(start).Seconds())
		r.mu.Unlock()
		if res.err != nil {
			if ctx.Err() != nil {
				return // stopped, not failed
			}
			if class := errorClass(res.err); class != "" {
				r.countIn(r.rep.Failed, class)
			} else {
				r.anomaly("query %d failed with an unnamed error: %v", i, res.err)
			}
			continue
		}
		r.check(i, res.a, start, end)
	}
}

// check holds an answer to record i, asked at start and answered at end,
// to account: its record is one load's, the load that published the
// generation it names (no other load's record was answered for that
// generation), and no newer generation was acknowledged before the query
// began.
func (r *run) check(i int, a *cluster.Answer, start, end time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := &r.history
	w := h.writer(i, r.cfg.RecordSize, a.Record)
	if w == nil {
		r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf("query %d (generation %d) answered a record no load wrote", i, a.Generation))
		return
	}
	if w.generation != 0 && w.generation != a.Generation {
		r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf("query %d named generation %d but answered load %d's record, which published generation %d", i, a.Generation, w.id, w.generation))
		return
	}
	if h.answered == nil {
		h.answered = map[uint64]int{}
	}
	if prev, ok := h.answered[a.Generation]; ok && prev != w.id {
		r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf("generation %d mixes loads %d and %d (query %d)", a.Generation, prev, w.id, i))
		return
	}
	h.answered[a.Generation] = w.id
	if w.start.After(end) {
		r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf("query %d answered load %d's record before that load began", i, w.id))
		return
	}
	if s := h.staleAfter(a.Generation, start); s != nil {
		r.rep.Anomalies = append(r.rep.Anomalies, fmt.Sprintf("query %d answered generation %d after generation %d was acknowledged (%v before the query began)",
			i, a.Generation, s.generation, start.Sub(s.end).Round(time.Millisecond)))
		return
	}
	r.rep.Queries++
}

// errorClass names the sentinel err wraps ("" if none): the errors a
// query or a load may fail with under faults.
func errorClass(err error) string {
	for _, e := range []struct {
		name string
		err  error
	}{
		{"deadline", context.DeadlineExceeded},
		{"no live replica", cluster.ErrNoReplica},
		{"concurrent load", cluster.ErrConcurrentLoad},
		{"claim lost", cluster.ErrClaimLost},
		{"placement moved", cluster.ErrPlacementMoved},
		{"map changed", cluster.ErrConflict},
		{"etcd", cluster.ErrEtcd},
		{"checksum", api.ErrChecksum},
		{"device full", api.ErrExhausted},
		{"disk full", api.ErrDiskFull},
		{"busy", api.ErrBusy},
		{"unavailable", api.ErrUnavailable},
		{"not found", api.ErrNotFound},
		{"permission", api.ErrPermissionDenied},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return ""
}
