package e2e

import (
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// TestProfile: each party's breakdown accounts for its whole session —
// the kinds' wall times add up to the session's wall time, their CPU times
// to the party's CPU total and never exceed it — and every kind of
// operation of the network appears, the HE layers under the variant they
// ran. The output stays exact.
func TestProfile(t *testing.T) {
	n, img, err := graph.Build(graph.Mini, 7, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []linear.Protocol{linear.Cheetah, linear.OptiEncodeBSGS} {
		rep, _, err := RunPipe(n, img, Config{Protocol: proto})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Correct {
			t.Fatalf("%s: %d of %d outputs differ", proto, rep.Mismatches, rep.Outputs)
		}
		for _, side := range []struct {
			name string
			pb   PartyBreakdown
			cpu  float64
		}{{"server", rep.Profile.Server, rep.ServerCPUS}, {"client", rep.Profile.Client, rep.ClientCPUS}} {
			pb := side.pb
			var wall, cpu, wait float64
			kinds := map[string]bool{}
			for _, k := range pb.Kinds {
				if k.WallS < 0 || k.CPUS < 0 || k.WaitS < 0 || k.WaitS > k.WallS+1e-6 || k.Calls <= 0 {
					t.Errorf("%s %s: kind %+v", proto, side.name, k)
				}
				wall += k.WallS
				cpu += k.CPUS
				wait += k.WaitS
				kinds[k.Kind] = true
			}
			if pb.WallS <= 0 || !near(wall, pb.WallS) || !near(wait, pb.WaitS) {
				t.Errorf("%s %s: kinds sum to %.6f s wall (%.6f s waits), session %.6f s (%.6f s)", proto, side.name, wall, wait, pb.WallS, pb.WaitS)
			}
			if !near(cpu, pb.CPUS) || cpu > side.cpu+1e-6 {
				t.Errorf("%s %s: kinds sum to %.6f CPU-s, profile %.6f, report %.6f", proto, side.name, cpu, pb.CPUS, side.cpu)
			}
			want := []string{KindSetup, KindReveal, KindOTExtension, KindMillionaires, "relu", "trunc", "maxpool", "avgpool", "add"}
			he := KindHE + proto.String()
			if proto == linear.OptiEncodeBSGS {
				// Small layers keep the merge tree; at least one splits.
				he = KindHE + linear.OptiEncodeBSGS.String()
			}
			want = append(want, he)
			if side.name == "server" {
				want = append(want, he+KindHEEncode)
			} else {
				want = append(want, he+KindHEEncrypt, he+KindHEDecrypt)
			}
			for _, k := range want {
				if !kinds[k] {
					t.Errorf("%s %s: no %q in the breakdown %v", proto, side.name, k, pb.Kinds)
				}
			}
			for k := range kinds {
				if strings.HasPrefix(k, KindHE) && proto == linear.Cheetah && !strings.HasPrefix(k, KindHE+"cheetah") {
					t.Errorf("%s %s: kind %q", proto, side.name, k)
				}
			}
		}
		// The client's clock is the session's.
		if rep.WallS != rep.Profile.Client.WallS {
			t.Errorf("%s: wall %v, client profile %v", proto, rep.WallS, rep.Profile.Client.WallS)
		}
	}
}

// near is equality up to float summation error.
func near(a, b float64) bool { return a-b < 1e-6*(1+b) && b-a < 1e-6*(1+b) }
