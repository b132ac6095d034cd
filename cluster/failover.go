package cluster

import (
	"context"
	"fmt"
	"strings"
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

// tryReplicas runs call on the live replicas of shard s of m, one after
// another, until one succeeds; each attempt gets its share of the
// caller's deadline (attemptTimeout). It returns the device that answered
// and how many replicas failed before it.
func (c *Client) tryReplicas(ctx context.Context, m *Map, s int, live map[string]DeviceInfo,
	call func(ctx context.Context, cc *client.Client) error) (dev string, retries int, err error) {
	var tried []string
	var up []string
	for _, id := range m.Shards[s].Replicas {
		if _, ok := live[id]; ok {
			up = append(up, id)
		} else {
			tried = append(tried, id+" (not live)")
		}
	}
	for k, id := range up {
		addr := live[id].Addr
		actx, cancel := context.WithTimeout(ctx, attemptTimeout(ctx, len(up)-k, c.ShardTimeout))
		cc, release, err := c.acquire(actx, addr)
		if err == nil {
			err = call(actx, cc)
			release()
			if err != nil && ctx.Err() == nil {
				c.forget(addr, cc)
			}
		}
		cancel()
		if err == nil {
			return id, retries, nil
		}
		retries++
		if k < len(up)-1 {
			c.metrics.failovers.Inc()
		}
		if ctx.Err() != nil {
			return "", retries, fmt.Errorf("cluster: shard %d of %s: %w (tried %s)", s, m.Name, ctx.Err(), strings.Join(append(tried, id), "; "))
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", id, err))
	}
	return "", retries, fmt.Errorf("%w for shard %d of %s generation %d: tried %s", ErrNoReplica, s, m.Name, m.Generation, strings.Join(tried, "; "))
}
