package cluster

import (
	"context"
	"errors"
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

// ErrNotRegistered is returned for a copy source that is no registered
// device of the cluster.
var ErrNotRegistered = errors.New("cluster: not a registered device")

// SourceCheck returns what a device asks before it copies from another
// (device.CheckSourcesWith): is addr the address of a device registered
// in the cluster at endpoints? A device of a cluster dials no other
// address on anyone's behalf.
func SourceCheck(endpoints []string) (check func(ctx context.Context, addr string) error, stop func(), err error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v: %w", ErrEtcd, endpoints, err)
	}
	check = func(ctx context.Context, addr string) error {
		ds, err := Devices(ctx, cli)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.Addr == addr {
				return nil
			}
		}
		return fmt.Errorf("%w: %q", ErrNotRegistered, addr)
	}
	return check, func() { cli.Close() }, nil
}
