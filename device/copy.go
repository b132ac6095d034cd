package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/authz"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/remote"
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

// copyACL brings db's access list along with its objects: copied objects
// without one would be nobody's (package authz refuses them to users). A
// list here that names another owner is a conflict, refused.
func (d *Device) copyACL(ctx context.Context, src api.Device, db string) error {
	obj, err := src.Get(ctx, &api.GetRequest{Name: authz.ACLObject(db)})
	if errors.Is(err, api.ErrNotFound) || (err != nil && strings.Contains(err.Error(), "NotFound")) {
		return nil // a source without access control: nothing to bring
	}
	if err != nil {
		return fmt.Errorf("device: copy: %w", errSourceUnavailable)
	}
	raw := make([]byte, 0, 64)
	if len(obj.Data) == 1 {
		for _, v := range obj.Data[0] {
			raw = append(raw, byte(v))
		}
	}
	b, err := object.DecodeBlob(raw)
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
	if err := d.SaveACL(db, theirs); err != nil {
		return err
	}
	d.access.Forget(db)
	return nil
}

// CopyFrom copies objects from another device into this one's store,
// device to device (the data never passes through the caller). Objects
// already here with the same shape are skipped, so an interrupted copy
// resumes.
func (d *Device) CopyFrom(ctx context.Context, req *api.CopyFromRequest) (*api.CopyFromResponse, error) {
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
	list, err := src.List(ctx, &api.ListRequest{Prefix: req.Prefix})
	if err != nil {
		return nil, fmt.Errorf("device: copy: %w", errSourceUnavailable)
	}
	if err := d.copyACL(ctx, src, db); err != nil {
		return nil, err
	}
	if list.Truncated {
		return nil, fmt.Errorf("device: copy from %s: %w: more than %d objects under %q", req.Source, api.ErrExhausted, api.MaxListObjects, req.Prefix)
	}
	resp := &api.CopyFromResponse{}
	for _, in := range list.Objects {
		if have, err := d.st.Stat(in.Name); err == nil && have.Shape == in.Shape && have.Kind == in.Kind {
			continue
		}
		if !strings.HasPrefix(in.Name, req.Prefix) {
			return resp, fmt.Errorf("device: copy: the source listed %q outside %q", in.Name, req.Prefix)
		}
		obj, err := src.Get(ctx, &api.GetRequest{Name: in.Name})
		if err != nil {
			return resp, fmt.Errorf("device: copy %s: %w", in.Name, errSourceUnavailable)
		}
		ws := int(in.Shape.WordSize)
		raw := make([][]byte, len(obj.Data))
		for i, limb := range obj.Data {
			raw[i] = make([]byte, ws*len(limb))
			for j, v := range limb {
				switch ws {
				case 8:
					binary.LittleEndian.PutUint64(raw[i][8*j:], v)
				case 2:
					binary.LittleEndian.PutUint16(raw[i][2*j:], uint16(v))
				case 1:
					raw[i][j] = byte(v)
				default:
					return resp, fmt.Errorf("device: copy %s: %d-byte words", in.Name, ws)
				}
			}
		}
		if err := d.write(func() error { _, err := d.st.Put(in.Name, in.Kind, in.Shape, raw); return err }); err != nil {
			return resp, fmt.Errorf("device: copy %s: %w", in.Name, err)
		}
		resp.Objects++
		resp.Bytes += in.Shape.Bytes()
	}
	return resp, nil
}
