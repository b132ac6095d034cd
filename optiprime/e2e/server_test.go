package e2e

import (
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// TestPreparedOptiPrime: a server that encoded its weights ahead serves a
// session whose layers each chose their layout (linear.OptiPrime); the
// output equals the plaintext reference exactly, the session did no weight
// encoding, and the layers ran more than one layout.
func TestPreparedOptiPrime(t *testing.T) {
	n, img, err := graph.Build(graph.Mini, 7, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.Reference(img)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewServer(n)
	ahead, err := sv.Prepare(linear.OptiPrime, 0)
	if err != nil {
		t.Fatal(err)
	}
	cc, sc := transport.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- sv.Serve(sc) }()
	out, rep, err := Infer(cc, n.Public(), img, Config{Protocol: linear.OptiPrime})
	if serr := <-errc; serr != nil {
		t.Fatalf("server: %v", serr)
	}
	if err != nil {
		t.Fatal(err)
	}
	rep.Check(out, want)
	if !rep.Correct {
		t.Fatalf("%d of %d outputs differ: got %v, want %v", rep.Mismatches, rep.Outputs, out, want)
	}
	if rep.Protocol != "optiprime" || rep.ServerAheadCPUS <= 0 || ahead != rep.ServerAheadCPUS {
		t.Errorf("protocol %q, ahead %v / %v CPU-s", rep.Protocol, ahead, rep.ServerAheadCPUS)
	}
	if rep.Linear.PrepCPUS > 0.05*ahead+0.01 {
		t.Errorf("the session encoded weights for %.3f CPU-s although they were prepared (%.3f CPU-s ahead)", rep.Linear.PrepCPUS, ahead)
	}
	variants := map[string]bool{}
	for _, k := range rep.Profile.Server.Kinds {
		if strings.HasSuffix(k.Kind, KindHEEncode) {
			t.Errorf("the session encoded weights: %+v", k)
		}
		if strings.HasPrefix(k.Kind, KindHE) {
			variants[k.Kind] = true
		}
	}
	for _, l := range rep.Layers {
		if (l.Kind == "conv") != (l.Variant != "") || (l.Variant != "" && !variants[KindHE+l.Variant]) {
			t.Errorf("%s: variant %q (profiled %v)", l.Op, l.Variant, variants)
		}
	}
	if len(variants) < 2 {
		t.Errorf("one layout for every layer: %v", variants)
	}
	t.Logf("layouts %v; %.2f s", variants, rep.WallS)
}
