package demo

import (
	"context"
	"testing"
)

// The main job finds the plaintext nearest neighbour through the device,
// moves far fewer bytes than a host-only run and projects a speedup over
// HA at Deep1B scale.
func TestSearch(t *testing.T) {
	s, err := Search(context.Background(), nil, SearchOptions{Vectors: 256, QueryImage: 3})
	if err == nil && s.Answer.Query != 3 {
		t.Fatalf("queried image %d, want 3", s.Answer.Query)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !s.Correct || s.Answer.Neighbor != s.Answer.PlainNeighbor {
		t.Fatalf("answer %+v (%s)", s.Answer, s.Error)
	}
	if s.SSDNodes == 0 || s.HostDeviceBytes*10 > s.HostOnlyBytes {
		t.Fatalf("ssd nodes %d, host↔device %d B vs host-only %d B", s.SSDNodes, s.HostDeviceBytes, s.HostOnlyBytes)
	}
	if f := s.ProjectedFull; len(f) != 3 || f[0].LatencyS >= f[1].LatencyS || f[0].LatencyS >= f[2].LatencyS {
		t.Fatalf("projection %+v", f)
	}
}
