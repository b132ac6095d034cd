package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// listTimeout bounds one replica's check during a reconcile: a device
// that does not answer in time (frozen, say) is left for the next one.
const listTimeout = 10 * time.Second

// reconcile checks what the live replicas of every shard of m hold — the
// map says where a shard lives, only the devices say what is there. Each
// replica is its own database written by its own load (its own data
// names and randomness), so each is checked against its own manifest: a
// replica whose manifest or access list is missing or corrupt, or whose data objects
// do not add up to the bytes the manifest records (a disk wiped, a copy
// cut short, a corrupt object its scrub quarantined), is short. A short
// replica is cleared and copied again from a whole one, device to device,
// every object checked against its source's checksum. It returns the
// replicas copied. A replica that does not answer is skipped: queries
// fail over around it, and the next reconcile sees it.
func (c *Client) reconcile(ctx context.Context, m *Map, live map[string]DeviceInfo) (int, error) {
	if m.Generation == 0 {
		return 0, nil
	}
	copied := 0
	var errs []error
	for s, sh := range m.Shards {
		var whole, short []string
		for _, id := range sh.Replicas {
			d, ok := live[id]
			if !ok {
				continue
			}
			ok, err := c.replicaWhole(ctx, d.Addr, m.ShardName(s))
			switch {
			case err != nil:
				continue
			case ok:
				whole = append(whole, id)
			default:
				short = append(short, id)
			}
		}
		if len(whole) == 0 {
			continue // nothing whole to copy from; Repair reports lost shards
		}
		for _, id := range short {
			if err := c.clearReplica(ctx, live[id].Addr, m.ShardName(s)+"/"); err != nil {
				errs = append(errs, fmt.Errorf("cluster: reconcile shard %d on %s: clear: %w", s, id, err))
				continue
			}
			if _, err := c.copyShard(ctx, m, s, id, whole, live, false); err != nil {
				errs = append(errs, fmt.Errorf("cluster: reconcile shard %d on %s: %w", s, id, err))
				continue
			}
			copied++
			c.metrics.reconciled.Inc()
		}
	}
	return copied, errors.Join(errs...)
}

// replicaWhole reports whether the device at addr holds shard database
// db whole: its manifest readable and its data objects adding up to the
// bytes the manifest records. An error: the device did not answer.
func (c *Client) replicaWhole(ctx context.Context, addr, db string) (bool, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	cc, release, err := c.acquire(lctx, addr)
	if err != nil {
		return false, err
	}
	defer release()
	in, err := cc.UnverifiedInfo(lctx, db)
	switch {
	case errors.Is(err, client.ErrNoDatabase), errors.Is(err, client.ErrTampered), errors.Is(err, api.ErrChecksum), errors.Is(err, api.ErrPermissionDenied):
		// No manifest, a corrupt one, or no access list (refused to the
		// coordinator, an admin: the list was lost or quarantined).
		return false, nil
	case err != nil:
		return false, err
	}
	objs, err := listAll(lctx, cc.Device(), in.DataPrefix())
	if err != nil {
		return false, err
	}
	var n int64
	for _, o := range objs {
		n += int64(o.Bytes)
	}
	return n == in.Bytes, nil
}

// clearReplica deletes every object under prefix from the device at
// addr: a short replica, about to be copied again whole.
func (c *Client) clearReplica(ctx context.Context, addr, prefix string) error {
	cc, release, err := c.acquire(ctx, addr)
	if err != nil {
		return err
	}
	defer release()
	objs, err := listAll(ctx, cc.Device(), prefix)
	if err != nil {
		return err
	}
	for name := range objs {
		if _, err := cc.Device().Delete(ctx, &devicepb.DeleteRequest{Name: name}); err != nil && !errors.Is(err, api.ErrNotFound) {
			return err
		}
	}
	return nil
}
