package device

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/remote"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// errSourceUnavailable is all a caller learns of a failed source.
var errSourceUnavailable = fmt.Errorf("%w: the source device did not answer", api.ErrUnavailable)

// CheckSourcesWith sets what CopyFrom asks of a source address before it
// dials it (a cluster member: cluster.SourceCheck, is it a registered
// device?). Without it, any address a device or admin names is dialled.
func (d *Device) CheckSourcesWith(check func(ctx context.Context, addr string) error) {
	d.mu.Lock()
	d.sourceCheck = check
	d.mu.Unlock()
}

// DialPeersWith sets how the device dials other devices (CopyFrom): TLS
// with its own certificate, or plaintext on loopback.
func (d *Device) DialPeersWith(opts ...remote.Option) {
	d.mu.Lock()
	d.peerDial = opts
	d.mu.Unlock()
}

// A copy is asked for by a device (or an admin) and reads from a source it
// names: both may lie. So a copy only adds to this store; it never
// rewrites what a database's owner wrote here:
//
//   - an access list is brought only where the database has none here (a
//     new replica); one here is never replaced;
//   - a manifest or a member object (grants, evaluation keys) is written
//     only where the database's manifest is not here (a new replica, or one
//     whose manifest was lost, being repaired), never into a database held
//     here;
//   - an object that exists here is written again only to repair it: the
//     same kind and shape, its pages failing their CRCs (and never a
//     manifest or member object, even then).
//
// Its source must present a device certificate of the deployment
// (certs.RequirePeerRole on the peer dial, set by `device serve`).

// ErrCopyRefused: a copy would have rewritten an access list, a manifest,
// a member object or an object of another shape already here. It matches
// api.ErrPermissionDenied.
var ErrCopyRefused = fmt.Errorf("device: copy: %w", api.ErrPermissionDenied)

// protectedObject reports whether name is what only a database's owner
// writes and a copy may not rewrite: its manifest or a member's object.
func protectedObject(db, name string) bool {
	return name == objname.Manifest(db) || strings.HasPrefix(name, objname.Members(db))
}

// heldHere reports whether database db's manifest is in this store: the
// database is held here, and a copy writes none of its owner's objects.
func (d *Device) heldHere(db string) (bool, error) {
	_, err := d.st.Stat(objname.Manifest(db))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// copyACL brings db's access list along with its objects where it has none
// here: copied objects without one would be nobody's (package authz
// refuses them to users). A list here is never replaced; one naming another
// owner is a conflict, refused.
func (d *Device) copyACL(ctx context.Context, src api.Device, db string) error {
	obj, err := src.Get(ctx, &devicepb.GetRequest{Name: objname.ACL(db)})
	if errors.Is(err, api.ErrNotFound) {
		return nil // a source without access control: nothing to bring
	}
	if err != nil {
		return fmt.Errorf("device: copy: %w", errSourceUnavailable)
	}
	b, err := api.BlobBytes(obj)
	if err != nil {
		return fmt.Errorf("device: copy: %w: the source's access list of %q: %w", api.ErrInvalid, db, err)
	}
	theirs, err := authz.UnmarshalACL(b)
	if err != nil {
		return fmt.Errorf("device: copy: %w: %w", api.ErrInvalid, err)
	}
	ours, err := d.LoadACL(db)
	if err != nil {
		return err
	}
	if ours != nil && ours.Owner != theirs.Owner {
		return fmt.Errorf("device: copy: %w: %q has another owner here", api.ErrPermissionDenied, db)
	}
	if ours != nil {
		return nil // never replaced: the owner's grants here stand
	}
	if err := d.SaveACL(db, theirs); err != nil {
		return err
	}
	d.access.Forget(db)
	return nil
}

// ErrCopyChecksum: an object copied from another device does not match
// the checksum its source sent with it (or came without one); it was not
// published. It matches api.ErrChecksum (gRPC DataLoss).
var ErrCopyChecksum = fmt.Errorf("device: copy: %w", api.ErrChecksum)

// CopyFrom copies objects from another device into this one's store,
// device to device (the data never passes through the caller). Each
// object is checked against the checksum its source sent (computed there
// from verified pages) before it is published here: a mismatch fails the
// copy with ErrCopyChecksum and publishes nothing of that object. Objects
// already here with the same shape are kept if they read back intact
// (every page's CRC), so an interrupted copy resumes and a corrupt local
// object is replaced.
func (d *Device) CopyFrom(ctx context.Context, req *devicepb.CopyFromRequest) (*devicepb.CopyFromResponse, error) {
	if err := api.CheckCopyFrom(req); err != nil {
		return nil, fmt.Errorf("device: copy: %w", err)
	}
	if req.Source == "" || req.Prefix == "" {
		return nil, fmt.Errorf("device: copy: %w: a source and a non-empty prefix are needed", api.ErrInvalid)
	}
	db, err := authz.DatabaseOf(req.Prefix)
	if err != nil {
		return nil, fmt.Errorf("device: copy: %w: %w", api.ErrInvalid, err)
	}
	d.mu.Lock()
	dial, check := d.peerDial, d.sourceCheck
	d.mu.Unlock()
	if check != nil {
		if err := check(ctx, req.Source); err != nil {
			return nil, fmt.Errorf("device: copy: %w: the source is not a device of this cluster", api.ErrPermissionDenied)
		}
	}
	src, err := remote.Dial(req.Source, dial...)
	if err != nil {
		return nil, fmt.Errorf("device: copy: %w", errSourceUnavailable)
	}
	defer src.Close()
	// The source's reasons (a dial error, say) stay here: returned, they
	// would make the device a scanner of its network for its callers.
	list, err := src.List(ctx, &devicepb.ListRequest{Prefix: req.Prefix})
	if err != nil {
		return nil, fmt.Errorf("device: copy: %w", errSourceUnavailable)
	}
	held, err := d.heldHere(db)
	if err != nil {
		return nil, err
	}
	if err := d.copyACL(ctx, src, db); err != nil {
		return nil, err
	}
	if list.Truncated {
		return nil, fmt.Errorf("device: copy from %s: %w: more than %d objects under %q", req.Source, api.ErrExhausted, api.MaxListObjects, req.Prefix)
	}
	resp := &devicepb.CopyFromResponse{}
	// The manifest goes last: until it is here the database is not held
	// here (heldHere), so a copy cut short — a timeout on a loaded host, a
	// source that vanished — is completed by the next one, member objects
	// included, instead of being refused them for good.
	objects := slices.Clone(list.Objects)
	slices.SortStableFunc(objects, func(a, b *devicepb.ObjectInfo) int {
		return cmp.Compare(boolInt(a.GetName() == objname.Manifest(db)), boolInt(b.GetName() == objname.Manifest(db)))
	})
	for _, o := range objects {
		if !strings.HasPrefix(o.GetName(), req.Prefix) {
			return resp, fmt.Errorf("device: copy: the source listed %q outside %q", o.GetName(), req.Prefix)
		}
		kind, shape, err := api.ObjectShape(o)
		if err != nil {
			return resp, fmt.Errorf("device: copy: the source's list: %w", err)
		}
		in := listed{Name: o.GetName(), Kind: kind, Shape: shape}
		have, err := d.st.Stat(in.Name)
		exists := err == nil
		switch {
		case exists && (have.Shape != in.Shape || have.Kind != in.Kind):
			return resp, fmt.Errorf("%w: %q is here with another shape", ErrCopyRefused, in.Name)
		case exists && d.holdsIntact(in):
			continue
		case protectedObject(db, in.Name) && (exists || held):
			return resp, fmt.Errorf("%w: %q: a copy writes no manifest or member object of a database held here", ErrCopyRefused, in.Name)
		}
		if err := d.copyObject(ctx, src, in); err != nil {
			return resp, err
		}
		resp.Objects++
		resp.Bytes += uint64(in.Shape.Bytes())
	}
	return resp, nil
}

// listed is an object a copy's source listed, its kind and shape checked.
type listed struct {
	Name  string
	Kind  object.Kind
	Shape object.Shape
}

// holdsIntact reports whether the store holds an object of in's kind and
// shape that reads back with every page's CRC intact.
func (d *Device) holdsIntact(in listed) bool {
	have, err := d.st.Stat(in.Name)
	if err != nil || have.Shape != in.Shape || have.Kind != in.Kind {
		return false
	}
	_, err = d.scrubObject(in.Name) // page by page: no copy of the object in memory
	return err == nil
}

// copyObject fetches one object from src, checks it against the
// checksum src sent and only then stores it.
func (d *Device) copyObject(ctx context.Context, src api.Device, in listed) error {
	obj, err := src.Get(ctx, &devicepb.GetRequest{Name: in.Name})
	if err != nil {
		if errors.Is(err, api.ErrChecksum) {
			// The source's own pages failed their CRCs: it is no source.
			return fmt.Errorf("device: copy %s: the source's copy is corrupt: %w", in.Name, ErrCopyChecksum)
		}
		return fmt.Errorf("device: copy %s: %w", in.Name, errSourceUnavailable)
	}
	kind, shape, raw, err := api.ObjectRaw(obj)
	if err != nil || kind != in.Kind || shape != in.Shape {
		return fmt.Errorf("device: copy %s: %w: the source sent another shape than it listed (%v)", in.Name, api.ErrInvalid, err)
	}
	if obj.Crc32C == nil {
		return fmt.Errorf("device: copy %s: the source sent no checksum: %w", in.Name, ErrCopyChecksum)
	}
	if got := object.Checksum(raw); got != *obj.Crc32C {
		d.copyCorrupt.Add(1)
		return fmt.Errorf("device: copy %s: computed %#08x, the source sent %#08x: %w", in.Name, got, *obj.Crc32C, ErrCopyChecksum)
	}
	if err := d.write(func() error { _, err := d.st.Put(in.Name, in.Kind, in.Shape, raw); return err }); err != nil {
		return fmt.Errorf("device: copy %s: %w", in.Name, err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
