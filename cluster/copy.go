package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
)

// ErrCopyMismatch: after a device-to-device copy the destination does not
// hold what the source listed.
var ErrCopyMismatch = errors.New("cluster: the copy does not match its source")

// copyShard copies shard s of m onto device dst, device to device, from
// the first of sources (live replicas, in order of preference) that
// holds the shard and whose copy checks out: dst must then list exactly
// the objects the source lists (names, kinds, shapes), the shard's
// manifest among them. A source that fails or holds no such shard (its
// disk wiped, say) gives way to the next. It returns the source used.
//
// fresh: dst is to become a new replica (a repair, a move), so a copy of
// the shard it still holds — left by a move away or by an attempt whose
// check failed — is dropped before each attempt. Otherwise that copy's
// manifest makes dst refuse every member object the source gained since
// (a client's keys, uploaded while the copy ran: device.CopyFrom writes no
// member object of a database held here), and every later repair onto dst
// failed the same way.
func (c *Client) copyShard(ctx context.Context, m *Map, s int, dst string, sources []string, live map[string]DeviceInfo, fresh bool) (string, error) {
	prefix := m.ShardName(s) + "/"
	var tried []string
	for _, src := range sources {
		if _, ok := live[src]; !ok || src == dst {
			continue
		}
		if fresh {
			if err := c.dropStale(ctx, m.ShardName(s), live[dst].Addr); err != nil {
				tried = append(tried, fmt.Sprintf("%s (dropping the copy %s held: %v)", src, dst, err))
				continue
			}
		}
		err := c.copyVerified(ctx, prefix, live[src].Addr, live[dst].Addr)
		if err == nil {
			return src, nil
		}
		if ctx.Err() != nil {
			return "", err
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", src, err))
	}
	return "", fmt.Errorf("%w to copy shard %d of %s onto %s from: tried %s", ErrNoReplica, s, m.Name, dst, strings.Join(tried, "; "))
}

// dropStale drops shard database name from the device at addr, if it
// holds it.
func (c *Client) dropStale(ctx context.Context, name, addr string) error {
	cc, release, err := c.acquire(ctx, addr)
	if err != nil {
		return err
	}
	defer release()
	if err := cc.Drop(ctx, name); err != nil && !errors.Is(err, client.ErrNoDatabase) && !errors.Is(err, api.ErrNotFound) {
		return err
	}
	return nil
}

// copyVerified has the device at dstAddr copy the objects under prefix
// from the device at srcAddr and checks that it then lists them all.
func (c *Client) copyVerified(ctx context.Context, prefix, srcAddr, dstAddr string) error {
	cc, release, err := c.acquire(ctx, srcAddr)
	if err != nil {
		return err
	}
	want, err := listAll(ctx, cc.Device(), prefix)
	release()
	if err != nil {
		return err
	}
	head := objname.Manifest(strings.TrimSuffix(prefix, "/"))
	if _, ok := want[head]; !ok {
		return fmt.Errorf("the source holds no %s", head)
	}
	dst, err := remote.Dial(dstAddr, c.dial...)
	if err != nil {
		return err
	}
	defer dst.Close()
	if _, err := dst.CopyFrom(ctx, &devicepb.CopyFromRequest{Source: srcAddr, Prefix: prefix}); err != nil {
		return err
	}
	got, err := listAll(ctx, dst, prefix)
	if err != nil {
		return err
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok || g.Kind != w.Kind || g.Polys != w.Polys || g.Limbs != w.Limbs || g.LogN != w.LogN || g.WordBytes != w.WordBytes {
			return fmt.Errorf("%w: %s", ErrCopyMismatch, name)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%w: %d objects under %s, the source lists %d", ErrCopyMismatch, len(got), prefix, len(want))
	}
	return nil
}

// listAll describes the objects under prefix on dev, by name.
func listAll(ctx context.Context, dev api.Device, prefix string) (map[string]*devicepb.ObjectInfo, error) {
	list, err := dev.List(ctx, &devicepb.ListRequest{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	if list.Truncated {
		return nil, fmt.Errorf("more than %d objects under %s", len(list.Objects), prefix)
	}
	out := make(map[string]*devicepb.ObjectInfo, len(list.Objects))
	for _, o := range list.Objects {
		out[o.Name] = o
	}
	return out, nil
}
