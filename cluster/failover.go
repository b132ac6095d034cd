package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
)

// attemptTimeout is how long one replica may take when left replicas
// (this one included) remain to be tried: an equal share of what is left
// of the caller's deadline, so that the last replica is always tried
// before the deadline; at most ceiling (the whole of ceiling without a
// deadline).
func attemptTimeout(ctx context.Context, left int, ceiling time.Duration) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok || left < 1 {
		return ceiling
	}
	return min(ceiling, time.Until(dl)/time.Duration(left))
}

// tryReplicas runs call on the live replicas of shard s of m until one
// succeeds, devices whose circuit is open (they kept failing) last, then
// replicas not registered now at the address they last had: one
// replica at a time, the next when one fails or takes more
// than its share of the caller's deadline (attemptTimeout), and a hedge —
// the next replica asked while the first still works — once an attempt
// has taken longer than most do (hedgeDelay). The first answer wins; the
// attempts still running are cancelled. It returns the answer, the
// device that gave it and how many other replicas were asked.
func tryReplicas[T any](ctx context.Context, c *Client, m *Map, s int, live map[string]DeviceInfo,
	call func(ctx context.Context, cc *client.Client) (T, error)) (T, string, int, error) {
	var zero T
	var tried []string
	var up []string
	addrOf := map[string]string{}
	for _, id := range m.Shards[s].Replicas {
		if d, ok := live[id]; ok {
			up = append(up, id)
			addrOf[id] = d.Addr
		}
	}
	// A device that keeps failing is asked last (breaker.go).
	c.breakers.order(up, func(id string) string { return addrOf[id] })
	// After the live replicas, those whose registration lapsed, at the
	// address they last had.
	for _, id := range m.Shards[s].Replicas {
		if _, ok := live[id]; ok {
			continue
		}
		if a, ok := c.lastAddr(id); ok {
			up = append(up, id)
			addrOf[id] = a
		} else {
			tried = append(tried, id+" (not live)")
		}
	}
	type result struct {
		k   int
		v   T
		err error
	}
	results := make(chan result, len(up))
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	launch := func() {
		k := len(cancels)
		addr := addrOf[up[k]]
		actx, cancel := context.WithTimeout(ctx, attemptTimeout(ctx, len(up)-k, c.ShardTimeout))
		cancels = append(cancels, cancel)
		go func() {
			start := time.Now()
			cc, release, err := c.acquire(actx, addr)
			var v T
			if err == nil {
				v, err = call(actx, cc)
				release()
				// A connection is forgotten when it failed or stalled, not
				// when this attempt was cancelled because another won.
				if err != nil && ctx.Err() == nil && !errors.Is(actx.Err(), context.Canceled) && !errors.Is(err, client.ErrNoPrograms) {
					c.forget(addr, cc)
				}
			}
			switch {
			case err == nil:
				c.latency.add(time.Since(start))
				c.breakers.succeeded(addr)
			case errors.Is(err, client.ErrNoPrograms):
				// This client's configuration, not the device's fault.
			case ctx.Err() == nil && !errors.Is(actx.Err(), context.Canceled):
				// Failed or stalled on its own account, not cancelled
				// because the caller gave up or another replica won.
				if c.breakers.failed(addr) {
					c.metrics.breakerOpens.Inc()
				}
			}
			results <- result{k: k, v: v, err: err}
		}()
	}
	running := 0
	if len(up) > 0 {
		launch()
		running++
	}
	for running > 0 {
		var hedge <-chan time.Time
		if len(cancels) < len(up) {
			if d, ok := c.latency.hedgeDelay(); ok {
				t := time.NewTimer(d)
				defer t.Stop()
				hedge = t.C
			}
		}
		select {
		case r := <-results:
			running--
			if r.err == nil {
				return r.v, up[r.k], len(cancels) - 1, nil
			}
			if ctx.Err() != nil {
				return zero, "", len(cancels) - 1, fmt.Errorf("cluster: shard %d of %s: %w (tried %s)", s, m.Name, ctx.Err(), strings.Join(append(tried, up[r.k]), "; "))
			}
			if errors.Is(r.err, client.ErrNoPrograms) {
				// No replica answers a kind this client cannot query.
				return zero, "", len(cancels) - 1, fmt.Errorf("cluster: shard %d of %s: %w", s, m.Name, r.err)
			}
			tried = append(tried, fmt.Sprintf("%s (%v)", up[r.k], r.err))
			if running == 0 && len(cancels) < len(up) {
				c.metrics.failovers.Inc()
				launch()
				running++
			}
		case <-hedge:
			c.metrics.hedges.Inc()
			launch()
			running++
		}
	}
	return zero, "", len(up), fmt.Errorf("%w for shard %d of %s generation %d: tried %s", ErrNoReplica, s, m.Name, m.Generation, strings.Join(tried, "; "))
}

// latencies keeps the durations of the last successful attempts, for
// the hedging delay.
type latencies struct {
	mu   sync.Mutex
	ring [128]time.Duration
	n    int // attempts recorded
}

// hedgeSamples is how many attempts must have succeeded before hedging
// starts; minHedgeDelay bounds the delay from below.
const (
	hedgeSamples  = 20
	minHedgeDelay = 50 * time.Millisecond
)

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.ring[l.n%len(l.ring)] = d
	l.n++
	l.mu.Unlock()
}

// hedgeDelay is the 95th percentile of the recent successful attempts
// (at least minHedgeDelay); none before hedgeSamples of them.
func (l *latencies) hedgeDelay() (time.Duration, bool) {
	l.mu.Lock()
	n := min(l.n, len(l.ring))
	if l.n < hedgeSamples {
		l.mu.Unlock()
		return 0, false
	}
	recent := make([]time.Duration, n)
	copy(recent, l.ring[:n])
	l.mu.Unlock()
	slices.Sort(recent)
	return max(recent[(n*95)/100], minHedgeDelay), true
}
