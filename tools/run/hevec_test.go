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
