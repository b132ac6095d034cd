package device

import (
	"context"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/guard"
)

// QueryLWE answers one query of an LWE PIR database generation: the typed
// PIR service of package pirserver, run in the device's run slots, cores
// and ISP mode, its reads counted with the device's.
func (d *Device) QueryLWE(ctx context.Context, req *devicepb.LWEQueryRequest) (*devicepb.LWEQueryResponse, error) {
	caller := "in-process"
	if id, ok := guard.IdentityFrom(ctx); ok {
		caller = id.Name
	}
	resp, err := d.pir.Query(ctx, caller, req)
	if err != nil {
		return nil, err
	}
	d.storeRead.Add(int64(resp.GetStoreBytes()))
	d.jobsRun.Add(1)
	return resp, nil
}
