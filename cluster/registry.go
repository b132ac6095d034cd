package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

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
// leaves at once). If the process dies, the lease expires after ttl.
func Register(ctx context.Context, cli *clientv3.Client, info DeviceInfo, ttl int64) (stop func(), err error) {
	if info.ID == "" || info.Addr == "" {
		return nil, errors.New("cluster: a device registers with an id and an address")
	}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	lease, err := cli.Grant(ctx, ttl)
	if err != nil {
		return nil, fmt.Errorf("%w: grant a lease: %w", ErrEtcd, err)
	}
	if _, err := cli.Put(ctx, DeviceKey(info.ID), string(b), clientv3.WithLease(lease.ID)); err != nil {
		cli.Revoke(ctx, lease.ID)
		return nil, fmt.Errorf("%w: register %s: %w", ErrEtcd, info.ID, Denied(err))
	}
	kctx, cancel := context.WithCancel(ctx)
	ch, err := cli.KeepAlive(kctx, lease.ID)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: keep %s alive: %w", ErrEtcd, info.ID, err)
	}
	go func() {
		for range ch { // drain the keep-alive answers
		}
	}()
	return func() {
		cancel()
		rctx, c := context.WithTimeout(context.Background(), 5e9)
		defer c()
		cli.Revoke(rctx, lease.ID)
	}, nil
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
