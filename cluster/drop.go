package cluster

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Drop deletes the caller's database name: its map and its keyword delta
// go in one transaction (queries stop finding it at once; a load in
// flight fails to publish), then every shard database of it on every live
// device. A device away now keeps its shards until the name is loaded
// again (that load's sweep removes them) or the device is wiped.
func (c *Client) Drop(ctx context.Context, name string) error {
	if strings.Contains(name, "/") {
		return fmt.Errorf("cluster: drop %s: only your own databases (no OWNER/ prefix)", name)
	}
	_, rev, err := readMap(ctx, c.etcd, c.owner, name)
	if err != nil {
		return err
	}
	key := MapKey(c.owner, name)
	resp, err := c.etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpDelete(key), clientv3.OpDelete(KVDeltaKey(c.owner, name), clientv3.WithPrefix())).Commit()
	if err != nil {
		return fmt.Errorf("%w: drop %s: %w", ErrEtcd, name, Denied(err))
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: drop %s", ErrConflict, name)
	}
	live, err := c.liveDevices(ctx)
	if err != nil {
		return fmt.Errorf("cluster: drop %s: the map is gone; its shards stay on the devices: %w", name, err)
	}
	if _, err := c.sweep(ctx, c.owner, name, live, func(int64) bool { return true }); err != nil {
		return fmt.Errorf("cluster: drop %s: the map is gone; some shards stay: %w", name, err)
	}
	return nil
}
