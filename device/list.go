package device

import (
	"context"
	"fmt"
	"github.com/rosemary-fhe/rosemary/device/api"
	"strings"
)

// List describes the stored objects under a prefix.
func (d *Device) List(_ context.Context, req *api.ListRequest) (*api.ListResponse, error) {
	limit := req.Max
	if limit <= 0 || limit > api.MaxListObjects {
		limit = api.MaxListObjects
	}
	all, err := d.st.List()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	resp := &api.ListResponse{}
	for _, in := range all {
		if !strings.HasPrefix(in.Name, req.Prefix) {
			continue
		}
		if len(resp.Objects) == limit {
			resp.Truncated = true
			break
		}
		resp.Objects = append(resp.Objects, api.ObjectInfo{Name: in.Name, Kind: in.Kind, Shape: in.Shape, Generation: in.Generation, Bytes: in.Bytes})
	}
	return resp, nil
}
