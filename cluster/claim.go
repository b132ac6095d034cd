package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A load fences itself before it writes anything: it claims its
// generation with a key under a lease (/rosemary/loads/<db>/<lease>),
// kept alive while it runs, and the etcd revision of that claim is its
// fencing token. Its shard databases carry the token in their names, so
// two loads never write the same database; it publishes only if the map
// is unchanged since it read it and its claim still holds, in one
// transaction. Of two concurrent loads one publishes, whole; the other
// fails with ErrConcurrentLoad and removes what it wrote. A sweep removes
// the shard databases of no published generation and no live claim (a
// load that crashed).
const loadsPrefix = "/rosemary/loads/"

// claimTTL is how long a claim outlives its loader (seconds).
const claimTTL = 30

// Errors of a fenced load.
var (
	// ErrConcurrentLoad: another load of the database published first;
	// this one published nothing and removed what it wrote.
	ErrConcurrentLoad = errors.New("cluster: another load of the database published first")
	// ErrClaimLost: the load's claim expired before it could publish (its
	// loader was paused or cut off from etcd for longer than the claim's
	// lease): its shards may have been swept, so it does not publish.
	ErrClaimLost = errors.New("cluster: the load's claim expired before it published")
	// ErrPlacementMoved: repairs re-placed the current generation's
	// replicas again and again while the load tried to publish over them.
	ErrPlacementMoved = errors.New("cluster: repairs kept moving the database's replicas while the load published")
)

// claim is a running load's hold on its generation.
type claim struct {
	key   string
	token int64
	lease clientv3.LeaseID
	stop  context.CancelFunc
}

// claimLoad claims the next generation of database name for a load.
func (c *Client) claimLoad(ctx context.Context, owner, name string) (*claim, error) {
	lease, err := c.etcd.Grant(ctx, claimTTL)
	if err != nil {
		return nil, fmt.Errorf("%w: claim a load of %s: %w", ErrEtcd, name, err)
	}
	key := LoadsKey(owner, name) + strconv.FormatInt(int64(lease.ID), 16)
	resp, err := c.etcd.Put(ctx, key, "", clientv3.WithLease(lease.ID))
	if err != nil {
		return nil, fmt.Errorf("%w: claim a load of %s: %w", ErrEtcd, name, err)
	}
	kctx, stop := context.WithCancel(ctx)
	alive, err := c.etcd.KeepAlive(kctx, lease.ID)
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w: keep the claim on %s: %w", ErrEtcd, name, err)
	}
	go func() {
		for range alive { // drain the keep-alive answers
		}
	}()
	return &claim{key: key, token: resp.Header.Revision, lease: lease.ID, stop: stop}, nil
}

// endClaim ends the claim (a published load's claim is no longer needed).
func (c *Client) endClaim(cl *claim) {
	cl.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.etcd.Revoke(ctx, cl.lease)
}

// publishLoad publishes next, the map of the load holding cl, if the map
// is still at revision rev and the claim still holds. A map that moved
// without a new generation — a repair or a rebalance re-placed the current
// generation's replicas while this load wrote its own — is published over
// (the new generation's shards are where this load put them, and nothing
// else of a map changes after its creation but what a load writes); a map
// of a newer generation is a concurrent load that won.
func (c *Client) publishLoad(ctx context.Context, next *Map, rev int64, cl *claim) error {
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	key := MapKey(next.Owner, next.Name)
	for moved := 0; ; moved++ {
		resp, err := c.etcd.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(key), "=", rev),
			clientv3.Compare(clientv3.CreateRevision(cl.key), "=", cl.token),
		).Then(clientv3.OpPut(key, string(b))).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return fmt.Errorf("%w: publish %s: %w", ErrEtcd, next.Name, err)
		}
		if resp.Succeeded {
			return nil
		}
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if len(kvs) == 1 && kvs[0].ModRevision == rev {
			return fmt.Errorf("%w: %s (token %d)", ErrClaimLost, next.Name, cl.token)
		}
		var now Map
		if len(kvs) == 1 && json.Unmarshal(kvs[0].Value, &now) == nil &&
			now.Generation+1 == next.Generation && now.Token == next.PreviousToken {
			if moved < maxPlacementMoves {
				c.metrics.loadRebases.Inc()
				rev = kvs[0].ModRevision
				continue
			}
			return fmt.Errorf("%w (%w): %s: its placement changed %d times while it published", ErrPlacementMoved, ErrConflict, next.Name, moved)
		}
		return fmt.Errorf("%w (%w): %s", ErrConcurrentLoad, ErrConflict, next.Name)
	}
}

// maxPlacementMoves bounds how often a load publishes again over a map
// that repairs keep re-placing.
const maxPlacementMoves = 8

// staleTokens says which shard databases of database name a sweep may
// remove, by token: all but those of its current generation and the one
// before it (queries in flight may read it), of loads whose claims hold,
// and of loads that claimed after the map and the claims were read (both
// in one snapshot: a load that publishes meanwhile is in the one or the
// other).
func (c *Client) staleTokens(ctx context.Context, owner, name string) (func(token int64) bool, error) {
	resp, err := c.etcd.Txn(ctx).Then(clientv3.OpGet(MapKey(owner, name)), clientv3.OpGet(LoadsKey(owner, name), clientv3.WithPrefix())).Commit()
	if err != nil {
		return nil, fmt.Errorf("%w: read the map and loads of %s: %w", ErrEtcd, name, err)
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, fmt.Errorf("%w %q", ErrNoDatabase, name)
	}
	var m Map
	if err := json.Unmarshal(kvs[0].Value, &m); err != nil {
		return nil, fmt.Errorf("cluster: map of %s: %w", name, err)
	}
	claimed := map[int64]bool{}
	for _, kv := range resp.Responses[1].GetResponseRange().GetKvs() {
		claimed[kv.CreateRevision] = true
	}
	asOf := resp.Header.Revision
	return func(token int64) bool {
		return token != m.Token && token != m.PreviousToken && !claimed[token] && token <= asOf
	}, nil
}
