package device

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/rosemary-fhe/rosemary/device/api"

	"github.com/rosemary-fhe/rosemary/device/remote"
)

// CopyFrom copies objects from another device into this one's store,
// device to device (the data never passes through the caller). Objects
// already here with the same shape are skipped, so an interrupted copy
// resumes.
func (d *Device) CopyFrom(ctx context.Context, req *api.CopyFromRequest) (*api.CopyFromResponse, error) {
	if req.Source == "" || req.Prefix == "" {
		return nil, fmt.Errorf("device: copy: %w: a source and a non-empty prefix are needed", api.ErrInvalid)
	}
	src, err := remote.Dial(req.Source)
	if err != nil {
		return nil, fmt.Errorf("device: copy from %s: %w", req.Source, err)
	}
	defer src.Close()
	list, err := src.List(ctx, &api.ListRequest{Prefix: req.Prefix})
	if err != nil {
		return nil, fmt.Errorf("device: copy from %s: %w", req.Source, err)
	}
	if list.Truncated {
		return nil, fmt.Errorf("device: copy from %s: %w: more than %d objects under %q", req.Source, api.ErrExhausted, api.MaxListObjects, req.Prefix)
	}
	resp := &api.CopyFromResponse{}
	for _, in := range list.Objects {
		if have, err := d.st.Stat(in.Name); err == nil && have.Shape == in.Shape && have.Kind == in.Kind {
			continue
		}
		obj, err := src.Get(ctx, &api.GetRequest{Name: in.Name})
		if err != nil {
			return resp, fmt.Errorf("device: copy %s from %s: %w", in.Name, req.Source, err)
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
