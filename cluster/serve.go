package cluster

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// Join registers a served device (reachable at addr, its store in dir)
// with the cluster's etcd under a lease of ttl seconds, kept alive until
// ctx ends or the returned stop runs (a killed device's lease expires
// after ttl). With RBAC (SetupAuth, AddUser) a device registers under its
// certificate's name only.
func Join(ctx context.Context, e Etcd, id, addr, dir string, ttl int64) (stop func(), err error) {
	cli, err := Connect(ctx, e)
	if err != nil {
		return nil, err
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
// in the cluster's etcd? A device of a cluster dials no other address on
// anyone's behalf.
func SourceCheck(e Etcd) (check func(ctx context.Context, addr string) error, stop func(), err error) {
	cli, err := Connect(context.Background(), e)
	if err != nil {
		return nil, nil, err
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
