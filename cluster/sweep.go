package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/authz"
)

// shardsPrefix begins the name of every object of every shard database of
// database name, whatever its generation.
func shardsPrefix(name string) string { return name + ".g" }

// shardGeneration is the generation of the shard database holding object
// (named "<name>.g<generation>.…/…"), and that shard database's name.
func shardGeneration(name, object string) (g uint64, db string, ok bool) {
	rest, found := strings.CutPrefix(object, shardsPrefix(name))
	if !found {
		return 0, "", false
	}
	digits, _, found := strings.Cut(rest, ".")
	if !found {
		return 0, "", false
	}
	g, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, "", false
	}
	db, _, _ = strings.Cut(object, "/")
	return g, db, true
}

// sweep deletes, on every live device, every shard database of name whose
// generation stale says is stale, whatever its shard id and whether or not
// the map ever listed it there (a load that failed half way, a publish
// whose outcome was unknown, a device that was away during a load). It
// returns the shard databases removed.
func (c *Client) sweep(ctx context.Context, name string, live map[string]DeviceInfo, stale func(g uint64) bool) (int, error) {
	removed := 0
	var errs []error
	for id, d := range live {
		cc, release, err := c.acquire(ctx, d.Addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s on %s: %w", name, id, err))
			continue
		}
		n, err := sweepDevice(ctx, cc.Device(), name, stale)
		release()
		removed += n
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s on %s: %w", name, id, err))
		}
	}
	return removed, errors.Join(errs...)
}

// sweepDevice deletes the stale shard databases of name on one device:
// each one's head first (it is gone at once), then its other objects.
func sweepDevice(ctx context.Context, dev api.Device, name string, stale func(g uint64) bool) (int, error) {
	dropped := map[string]bool{}
	for {
		list, err := dev.List(ctx, &api.ListRequest{Prefix: shardsPrefix(name)})
		if err != nil {
			return len(dropped), err
		}
		var heads, rest []string
		for _, o := range list.Objects {
			g, db, ok := shardGeneration(name, o.Name)
			if !ok || !stale(g) {
				continue
			}
			dropped[db] = true
			if o.Name == authz.ManifestName(db) {
				heads = append(heads, o.Name)
			} else {
				rest = append(rest, o.Name)
			}
		}
		for _, obj := range append(heads, rest...) {
			if _, err := dev.Delete(ctx, &api.DeleteRequest{Name: obj}); err != nil && !errors.Is(err, api.ErrNotFound) && !strings.Contains(err.Error(), "NotFound") {
				return len(dropped), fmt.Errorf("delete %s: %w", obj, err)
			}
		}
		// A truncated list is listed again once its stale objects are
		// gone; one with none left to delete cannot shrink further.
		if !list.Truncated || len(heads)+len(rest) == 0 {
			return len(dropped), nil
		}
	}
}
