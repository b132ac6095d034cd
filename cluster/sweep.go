package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/certs"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// shardsPrefix begins the name of every object of every shard database of
// database name, whatever its generation.
func shardsPrefix(name string) string { return name + ".g" }

// shardToken is the fencing token of the shard database holding object
// (named "<name>.g<generation>[.t<token>].s<shard>/…"; 0 without one),
// and that shard database's name.
func shardToken(name, object string) (token int64, db string, ok bool) {
	db, _, _ = strings.Cut(object, "/")
	rest, found := strings.CutPrefix(db, shardsPrefix(name))
	if !found {
		return 0, "", false
	}
	parts := strings.Split(rest, ".")
	number := func(s, tag string) (int64, bool) {
		d, found := strings.CutPrefix(s, tag)
		n, err := strconv.ParseInt(d, 10, 64)
		return n, found && err == nil && d[0] >= '0' && d[0] <= '9'
	}
	if _, ok := number(parts[0], ""); !ok {
		return 0, "", false
	}
	switch len(parts) {
	case 2: // written before loads were fenced
		_, ok = number(parts[1], "s")
	case 3:
		if token, ok = number(parts[1], "t"); ok {
			_, ok = number(parts[2], "s")
		}
	}
	return token, db, ok
}

// sweepTimeout bounds a sweep's work on one device.
const sweepTimeout = 30 * time.Second

// sweep deletes, on every live device, every shard database of name whose
// token stale says is stale, whatever its shard id and whether or not the
// map ever listed it there (a load that failed or crashed half way, a
// publish whose outcome was unknown, a device that was away while its
// generation was dropped). It returns the shard databases removed.
//
// Shard names are a user's own (another owner's database of the same name
// has shards of the same form, with other tokens): only shards the device
// says owner created are swept.
func (c *Client) sweep(ctx context.Context, owner, name string, live map[string]DeviceInfo, stale func(token int64) bool) (int, error) {
	removed := 0
	var errs []error
	for id, d := range live {
		// A device that does not answer is swept another time.
		dctx, cancel := context.WithTimeout(ctx, sweepTimeout)
		cc, release, err := c.acquire(dctx, d.Addr)
		if err != nil {
			cancel()
			errs = append(errs, fmt.Errorf("sweep %s on %s: %w", name, id, err))
			continue
		}
		n, err := sweepDevice(dctx, cc.Device(), owner, name, stale)
		release()
		cancel()
		removed += n
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s on %s: %w", name, id, err))
		}
	}
	c.metrics.swept.Add(float64(removed))
	return removed, errors.Join(errs...)
}

// ownedBy reports whether a shard database a device says listed owns may
// be owner's: it names owner, or cannot tell — no access list, or a
// plaintext device, on which every caller is the one plaintext identity.
func ownedBy(listed, owner string) bool {
	return listed == owner || listed == "" || listed == certs.Plaintext.Name
}

// sweepDevice deletes the stale shard databases of owner's database name
// on one device: each one's head first (it is gone at once), then its
// other objects. A shard database the device says another created is
// left alone (one it names no owner of, a device without access lists,
// is swept).
func sweepDevice(ctx context.Context, dev api.Device, owner, name string, stale func(token int64) bool) (int, error) {
	dropped := map[string]bool{}
	for {
		list, err := dev.List(ctx, &devicepb.ListRequest{Prefix: shardsPrefix(name)})
		if err != nil {
			return len(dropped), err
		}
		var heads, rest []string
		for _, o := range list.Objects {
			token, db, ok := shardToken(name, o.Name)
			if !ok || !stale(token) || !ownedBy(o.Owner, owner) {
				continue
			}
			dropped[db] = true
			if o.Name == objname.Manifest(db) {
				heads = append(heads, o.Name)
			} else {
				rest = append(rest, o.Name)
			}
		}
		for _, obj := range append(heads, rest...) {
			if _, err := dev.Delete(ctx, &devicepb.DeleteRequest{Name: obj}); err != nil && !errors.Is(err, api.ErrNotFound) {
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
