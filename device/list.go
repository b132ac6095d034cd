package device

import (
	"context"
	"fmt"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// List describes the stored objects under a prefix.
func (d *Device) List(_ context.Context, req *devicepb.ListRequest) (*devicepb.ListResponse, error) {
	if err := api.CheckName("prefix", req.Prefix); err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	limit := int(req.MaxObjects)
	if limit <= 0 || limit > api.MaxListObjects {
		limit = api.MaxListObjects
	}
	all, err := d.st.List()
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	resp := &devicepb.ListResponse{}
	for _, in := range all {
		if !strings.HasPrefix(in.Name, req.Prefix) {
			continue
		}
		if len(resp.Objects) == limit {
			resp.Truncated = true
			break
		}
		resp.Objects = append(resp.Objects, api.ObjectInfo(in.Name, in.Kind, in.Shape, in.Generation, in.Bytes))
	}
	return resp, nil
}
