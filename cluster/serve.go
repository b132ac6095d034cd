package cluster

import (
	"context"
	"fmt"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Join registers a served device (reachable at addr, its store in dir)
// with the cluster at endpoints under a lease of ttl seconds, kept alive until ctx ends or the returned stop
// runs (a killed device's lease expires after ttl).
func Join(ctx context.Context, endpoints []string, id, addr, dir string, ttl int64) (stop func(), err error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrEtcd, endpoints, err)
	}
	info := DeviceInfo{ID: id, Addr: addr}
	var fs syscall.Statfs_t
	if dir != "" && syscall.Statfs(dir, &fs) == nil {
		info.Capacity, info.Free = int64(fs.Blocks)*fs.Bsize, int64(fs.Bavail)*fs.Bsize
	}
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
