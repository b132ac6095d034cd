package cluster

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Join registers a served device (reachable at addr) with the cluster at
// endpoints under a lease of ttl seconds, kept alive until ctx ends or the returned stop
// runs (a killed device's lease expires after ttl).
func Join(ctx context.Context, endpoints []string, id, addr string, ttl int64) (stop func(), err error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrEtcd, endpoints, err)
	}
	info := DeviceInfo{ID: id, Addr: addr}
	unregister, err := Register(ctx, cli, info, ttl)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return func() {
		unregister()
		cli.Close()
	}, nil
}
