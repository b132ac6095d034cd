package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Key prefixes in etcd.
const (
	devicesPrefix = "/rosemary/devices/"
	dbsPrefix     = "/rosemary/dbs/"
)

// DeviceInfo is what a device registers.
type DeviceInfo struct {
	ID       string `json:"id"`
	Addr     string `json:"addr"`
	Capacity int64  `json:"capacity_bytes,omitempty"`
	Free     int64  `json:"free_bytes,omitempty"`
}

// ErrEtcd wraps failures to reach etcd.
var ErrEtcd = errors.New("cluster: etcd")

// Register puts a device under a lease of ttl seconds and keeps the lease
// alive until ctx ends or stop is called (which revokes it: the device
// leaves at once). If the process dies, the lease expires after ttl. A
// lease lost while the device lives (the process was paused past ttl,
// etcd was out of reach, the lease was revoked) is replaced: the device
// registers again under a new lease as soon as etcd answers.
func Register(ctx context.Context, cli *clientv3.Client, info DeviceInfo, ttl int64) (stop func(), err error) {
	if info.ID == "" || info.Addr == "" {
		return nil, errors.New("cluster: a device registers with an id and an address")
	}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	kctx, cancel := context.WithCancel(ctx)
	lease, alive, err := registerOnce(kctx, cli, DeviceKey(info.ID), string(b), ttl)
	if err != nil {
		cancel()
		return nil, err
	}
	var mu sync.Mutex // guards lease
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for range alive { // drain the keep-alive answers
			}
			// The channel closed: ctx ended, or the lease is lost.
			wait := 200 * time.Millisecond
			for {
				select {
				case <-kctx.Done():
					return
				case <-time.After(wait):
				}
				l, a, err := registerOnce(kctx, cli, DeviceKey(info.ID), string(b), ttl)
				if err == nil {
					mu.Lock()
					lease, alive = l, a
					mu.Unlock()
					break
				}
				wait = min(2*wait, time.Duration(ttl)*time.Second)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		rctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		mu.Lock()
		id := lease
		mu.Unlock()
		cli.Revoke(rctx, id)
	}, nil
}

// registerOnce grants a lease of ttl seconds, puts key=value under it and
// starts keeping it alive.
func registerOnce(ctx context.Context, cli *clientv3.Client, key, value string, ttl int64) (clientv3.LeaseID, <-chan *clientv3.LeaseKeepAliveResponse, error) {
	// Neither call may outlast the lease it is about.
	tctx, cancel := context.WithTimeout(ctx, max(time.Duration(ttl)*time.Second, 5*time.Second))
	defer cancel()
	lease, err := cli.Grant(tctx, ttl)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: grant a lease: %w", ErrEtcd, err)
	}
	if _, err := cli.Put(tctx, key, value, clientv3.WithLease(lease.ID)); err != nil {
		cli.Revoke(context.WithoutCancel(ctx), lease.ID)
		return 0, nil, fmt.Errorf("%w: register %s: %w", ErrEtcd, key, Denied(err))
	}
	alive, err := cli.KeepAlive(ctx, lease.ID)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: keep %s alive: %w", ErrEtcd, key, err)
	}
	return lease.ID, alive, nil
}

// Devices lists the live devices (their leases unexpired), by id.
func Devices(ctx context.Context, cli *clientv3.Client) ([]DeviceInfo, error) {
	resp, err := cli.Get(ctx, devicesPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("%w: list devices: %w", ErrEtcd, err)
	}
	var out []DeviceInfo
	for _, kv := range resp.Kvs {
		var d DeviceInfo
		if err := json.Unmarshal(kv.Value, &d); err != nil {
			return nil, fmt.Errorf("cluster: device record %s: %w", kv.Key, err)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
