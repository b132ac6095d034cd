package device

import (
	"context"
	"encoding/binary"
	"fmt"

	pb "github.com/rosemary-fhe/rosemary/device/devicepb"
)

// CopyFromRequest asks a device to copy the objects under Prefix from the
// device at Source.
type CopyFromRequest struct {
	Source string
	Prefix string
}

// CopyFromResponse reports what was copied.
type CopyFromResponse struct {
	Objects int
	Bytes   int64
}

// CopyFrom copies objects from another device into this one's store,
// device to device (the data never passes through the caller). Objects
// already here with the same shape are skipped, so an interrupted copy
// resumes.
func (d *Device) CopyFrom(ctx context.Context, req *CopyFromRequest) (*CopyFromResponse, error) {
	if req.Source == "" || req.Prefix == "" {
		return nil, fmt.Errorf("device: copy: %w: a source and a non-empty prefix are needed", ErrInvalid)
	}
	src, err := Dial(req.Source)
	if err != nil {
		return nil, fmt.Errorf("device: copy from %s: %w", req.Source, err)
	}
	defer src.Close()
	list, err := src.List(ctx, &ListRequest{Prefix: req.Prefix})
	if err != nil {
		return nil, fmt.Errorf("device: copy from %s: %w", req.Source, err)
	}
	if list.Truncated {
		return nil, fmt.Errorf("device: copy from %s: %w: more than %d objects under %q", req.Source, ErrExhausted, MaxListObjects, req.Prefix)
	}
	resp := &CopyFromResponse{}
	for _, in := range list.Objects {
		if have, err := d.st.Stat(in.Name); err == nil && have.Shape == in.Shape && have.Kind == in.Kind {
			continue
		}
		obj, err := src.GetObject(ctx, &GetRequest{Name: in.Name})
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

func copyFromProto(m *pb.CopyFromRequest) (*CopyFromRequest, error) {
	if err := checkNameLen("prefix", m.GetPrefix()); err != nil {
		return nil, err
	}
	if err := checkNameLen("source", m.GetSource()); err != nil {
		return nil, err
	}
	return &CopyFromRequest{Source: m.GetSource(), Prefix: m.GetPrefix()}, nil
}

func (s *server) CopyFrom(ctx context.Context, in *pb.CopyFromRequest) (*pb.CopyFromResponse, error) {
	return handle(ctx, "CopyFrom", in, copyFromProto, s.d.CopyFrom, func(r *CopyFromResponse) *pb.CopyFromResponse {
		return &pb.CopyFromResponse{Objects: uint32(r.Objects), Bytes: uint64(r.Bytes)}
	})
}

// CopyFrom asks the device to copy objects from another device.
func (c *Client) CopyFrom(ctx context.Context, req *CopyFromRequest) (*CopyFromResponse, error) {
	return callCtx(ctx, c, "CopyFrom", c.rpc.CopyFrom, &pb.CopyFromRequest{Source: req.Source, Prefix: req.Prefix},
		func(m *pb.CopyFromResponse) (*CopyFromResponse, error) {
			return &CopyFromResponse{Objects: int(m.GetObjects()), Bytes: int64(m.GetBytes())}, nil
		})
}
