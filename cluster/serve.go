package cluster

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
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

// JoinRetrying is Join, tried again with a growing pause (up to maxWait)
// while etcd cannot be reached — no quorum, a member restarting, the whole
// control plane away — so that a daemon started meanwhile waits for it
// instead of ending. A refusal (ErrDenied: the certificate's name is no
// etcd user, or not this device's) is returned at once, and so is ctx's
// end. retry hears each failure that is tried again.
func JoinRetrying(ctx context.Context, e Etcd, id, addr, dir string, ttl int64, maxWait time.Duration, retry func(error)) (stop func(), err error) {
	wait := 200 * time.Millisecond
	for {
		stop, err := Join(ctx, e, id, addr, dir, ttl)
		if err == nil || errors.Is(err, ErrDenied) || !errors.Is(err, ErrEtcd) {
			return stop, err
		}
		if retry != nil {
			retry(err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (and then: %w)", err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
	}
}
