package device

import (
	"context"
	"fmt"
	"strings"

	pb "github.com/rosemary-fhe/rosemary/device/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
)

// MaxListObjects bounds one List reply.
const MaxListObjects = 1 << 16

// ListRequest asks for the objects whose names start with Prefix.
type ListRequest struct {
	Prefix string
	Max    int // 0: MaxListObjects
}

// ListResponse describes stored objects in name order.
type ListResponse struct {
	Objects   []store.Info
	Truncated bool
}

// List describes the stored objects under a prefix.
func (d *Device) List(_ context.Context, req *ListRequest) (*ListResponse, error) {
	limit := req.Max
	if limit <= 0 || limit > MaxListObjects {
		limit = MaxListObjects
	}
	all, err := d.st.List()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	resp := &ListResponse{}
	for _, in := range all {
		if !strings.HasPrefix(in.Name, req.Prefix) {
			continue
		}
		if len(resp.Objects) == limit {
			resp.Truncated = true
			break
		}
		resp.Objects = append(resp.Objects, in)
	}
	return resp, nil
}

func listFromProto(m *pb.ListRequest) (*ListRequest, error) {
	if err := checkNameLen("prefix", m.GetPrefix()); err != nil {
		return nil, err
	}
	return &ListRequest{Prefix: m.GetPrefix(), Max: int(min(m.GetMaxObjects(), MaxListObjects))}, nil
}

func listRespToProto(r *ListResponse) *pb.ListResponse {
	m := &pb.ListResponse{Truncated: r.Truncated}
	for _, in := range r.Objects {
		m.Objects = append(m.Objects, &pb.ObjectInfo{Name: in.Name, Kind: uint32(in.Kind), Polys: uint32(in.Shape.Polys),
			Limbs: uint32(in.Shape.Limbs), LogN: uint32(in.Shape.LogN), WordBytes: uint32(in.Shape.WordSize), Bytes: uint64(in.Bytes),
			Generation: uint64(in.Generation)})
	}
	return m
}

func listRespFromProto(m *pb.ListResponse) (*ListResponse, error) {
	r := &ListResponse{Truncated: m.GetTruncated()}
	for _, o := range m.GetObjects() {
		if o.GetLogN() > 17 || o.GetWordBytes() > 255 || o.GetKind() > 255 {
			return nil, fmt.Errorf("%w: object %q of logN %d, %d-byte words", ErrInvalid, o.GetName(), o.GetLogN(), o.GetWordBytes())
		}
		r.Objects = append(r.Objects, store.Info{Name: o.GetName(), Kind: store.Kind(o.GetKind()), Bytes: int64(o.GetBytes()),
			Generation: store.Generation(o.GetGeneration()),
			Shape:      store.Shape{Polys: int(o.GetPolys()), Limbs: int(o.GetLimbs()), LogN: uint8(o.GetLogN()), WordSize: uint8(o.GetWordBytes())}})
	}
	return r, nil
}

func (s *server) List(ctx context.Context, in *pb.ListRequest) (*pb.ListResponse, error) {
	return handle(ctx, "List", in, listFromProto, s.d.List, listRespToProto)
}

// List describes the stored objects under a prefix.
func (c *Client) List(ctx context.Context, req *ListRequest) (*ListResponse, error) {
	return callCtx(ctx, c, "List", c.rpc.List, &pb.ListRequest{Prefix: req.Prefix, MaxObjects: uint32(max(req.Max, 0))}, listRespFromProto)
}

// DeleteObject deletes a stored object (in process).
func (d *Device) DeleteObject(ctx context.Context, req *DeleteRequest) (*DeleteResponse, error) {
	return d.Delete(ctx, req)
}

// DeleteObject deletes a stored object.
func (c *Client) DeleteObject(ctx context.Context, req *DeleteRequest) (*DeleteResponse, error) {
	if err := c.Delete(ctx, req.Name); err != nil {
		return nil, err
	}
	return &DeleteResponse{}, nil
}
