package run

import (
	"context"
	"testing"
)

// An encrypted nearest-neighbour query over 256 MNIST images stored on an
// in-process device, its query encrypted by the edge (RISE) encryptor,
// with the compiler's full plan: the answer decrypts to the plaintext
// nearest neighbour and far fewer bytes cross than the database holds.
func TestHEVECEdgeQuery(t *testing.T) {
	rep, err := Run(context.Background(), nil, Options{Workload: "hevec", HEVECVectors: 256, EdgeQuery: true, Opt: "full", Placement: "device"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Correct {
		t.Fatalf("incorrect: %s", rep.Error)
	}
	if rep.HostDeviceBytes*10 > rep.HostOnlyBytes {
		t.Fatalf("host↔device %d bytes vs host-only %d", rep.HostDeviceBytes, rep.HostOnlyBytes)
	}
	t.Logf("host↔device %d B, host-only %d B (%.1f×), wall %.1f s", rep.HostDeviceBytes, rep.HostOnlyBytes, rep.Ratio, rep.WallSeconds)
}

// `rosemary run -w pir` without --device: the harness writes the database
// straight into its in-process device's store and queries it over gRPC;
// the device must let the harness's identity query what it wrote.
func TestRunPIRInProcess(t *testing.T) {
	rep, err := Run(context.Background(), nil, Options{Workload: "pir", PIRRecords: 1 << 12, PIRRecordSize: 64}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Correct || rep.Queries != 2 {
		t.Fatalf("report %+v", rep)
	}
}
