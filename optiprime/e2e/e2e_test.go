package e2e

import (
	"errors"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nonlinear"
	"github.com/rosemary-fhe/rosemary/optiprime/ot"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// TestReducedNetworks runs the reduced residual networks (32×32, a few
// channels, every layer type of ResNet-18/50: convolutions with folded
// batch normalization, truncation, ReLU, max-pool, residual additions,
// average-pool, fully connected) end to end under each linear protocol and
// requires the client's output to equal the plaintext reference exactly.
func TestReducedNetworks(t *testing.T) {
	for _, spec := range []graph.Spec{graph.Mini, graph.MiniBottleneck} {
		n, img, err := graph.Build(spec, 7, graph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		protos := linear.Protocols
		if spec.Bottleneck { // the block type differs; one protocol keeps the test short
			protos = []linear.Protocol{linear.OptiEncodeBSGS}
		}
		for _, proto := range protos {
			rep, out, err := RunPipe(n, img, Config{Protocol: proto})
			if err != nil {
				t.Fatalf("%s %s: %v", spec.Name, proto, err)
			}
			if !rep.Correct || rep.Outputs != spec.Classes {
				t.Fatalf("%s %s: %d of %d outputs differ from the reference (got %v)", spec.Name, proto, rep.Mismatches, rep.Outputs, out)
			}
			// Every layer type ran and was measured.
			kinds := map[string]int{}
			for _, l := range rep.Layers {
				kinds[l.Kind]++
				if l.Class != ClassLocal && l.BytesC2S+l.BytesS2C == 0 {
					t.Errorf("%s %s: %s moved no bytes", spec.Name, proto, l.Op)
				}
			}
			// The max-pool reads a truncated ReLU's outputs, so it runs
			// first, over ℓ bits, and the ReLU with its truncation after
			// it on the pooled values (fuse.go): the max-pool's bytes are
			// those two formulas' (plus whole silent-OT refills that fell
			// in it), fewer than the ReLU on every value and then the
			// max-pool of its outputs over ℓ − s bits; the ReLU moves none.
			for i, op := range n.Ops {
				if op.Kind != graph.MaxPool {
					continue
				}
				relu := n.Ops[op.In[0]-1]
				trunc := n.Ops[relu.In[0]-1]
				if relu.Kind != graph.ReLU || trunc.Kind != graph.Trunc {
					t.Fatalf("%s: the max-pool does not read a truncated ReLU", spec.Name)
				}
				out, w, l := rep.Layers[i].Elements, op.K*op.K, n.LogT
				bytes := func(st transport.Stats) uint64 { return st.BytesC2S + st.BytesS2C }
				want := bytes(nonlinear.MaxPoolCost(out*w, w, l)) + bytes(nonlinear.ReLUTruncateCost(out, l, trunc.Shift))
				before := bytes(nonlinear.ReLUTruncateCost(rep.Layers[op.In[0]-1].Elements, l, trunc.Shift)) +
					bytes(nonlinear.MaxPoolNonnegCost(out*w, w, l, l-1-trunc.Shift))
				got := rep.Layers[i].BytesC2S + rep.Layers[i].BytesS2C
				refill := nonlinear.RefillBytes(ot.FerretRegular)
				if got < want || (got-want)%refill != 0 || want >= before {
					t.Errorf("%s %s: max-pool moved %d bytes; formula %d pooling first (refills of %d apart), %d after the ReLU",
						spec.Name, proto, got, want, refill, before)
				}
				if r := rep.Layers[op.In[0]-1]; r.Class != ClassLocal || r.BytesC2S+r.BytesS2C != 0 {
					t.Errorf("%s %s: the pooled ReLU is %s and moved %d bytes", spec.Name, proto, r.Class, r.BytesC2S+r.BytesS2C)
				}
			}
			for _, k := range []string{"conv", "trunc", "relu", "maxpool", "avgpool", "add"} {
				if kinds[k] == 0 {
					t.Errorf("%s: no %s operation", spec.Name, k)
				}
			}
			if rep.HE.InputCts == 0 || rep.Linear.Bytes == 0 || rep.Nonlinear.Bytes == 0 ||
				rep.TotalBytes < rep.Linear.Bytes+rep.Nonlinear.Bytes+rep.SetupBytes {
				t.Errorf("%s %s: inconsistent totals %+v", spec.Name, proto, rep)
			}
			t.Logf("%s %s: output %v; %.2f MB, %d rounds, %.2f s (linear %.2f, nonlinear %.2f)", spec.Name, proto, out,
				float64(rep.TotalBytes)/1e6, rep.Rounds, rep.WallS, rep.LinearS, rep.NonlinearS)
		}
	}
}

// TestArchitectureMismatch: a client whose public network differs from the
// server's (here ℓ) is refused with a named error on both sides.
func TestArchitectureMismatch(t *testing.T) {
	n, img, err := graph.Build(graph.Mini, 7, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := graph.Build(graph.Mini, 7, graph.Options{LogT: 36})
	if err != nil {
		t.Fatal(err)
	}
	cc, sc := transport.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- Serve(sc, n) }()
	_, _, cerr := Infer(cc, other.Public(), img, Config{Protocol: linear.Cheetah})
	serr := <-errc
	if serr == nil || !strings.Contains(serr.Error(), "architecture") {
		t.Errorf("server: %v, want an architecture error", serr)
	}
	if cerr == nil || !strings.Contains(cerr.Error(), "architecture") {
		t.Errorf("client: %v, want the server's reason", cerr)
	}
}

// TestGaloisKeyRefused: a server given a seeded Galois key that is short or
// whose b-half was altered refuses the session with the named error
// (cheetah.ErrGaloisKeyMessage, cheetah.ErrGaloisKeyDigest) before any
// layer runs.
func TestGaloisKeyRefused(t *testing.T) {
	n, _, err := graph.Build(graph.Mini, 7, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := hello{Hello: protocol.Hello(linear.OptiEncode, 13), Digest: n.Digest()}
	s, err := newSession(n, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.galois) == 0 {
		t.Fatal("the session needs no Galois keys")
	}
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		want error
	}{
		{"short", func(b []byte) []byte { return b[:len(b)-1] }, cheetah.ErrGaloisKeyMessage},
		{"tampered", func(b []byte) []byte { b[len(b)-9] ^= 1; return b }, cheetah.ErrGaloisKeyDigest},
	} {
		cc, sc := transport.Pipe()
		errc := make(chan error, 1)
		go func() { errc <- Serve(sc, n) }()
		lc := linear.NewClient(s.params)
		pkb, err := lc.Keys.PK.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		gks, err := cheetah.GenSeededGaloisKeys(s.params, lc.Keys.SK, s.galois[:1])
		if err != nil {
			t.Fatal(err)
		}
		kb, err := s.params.MarshalSeededGaloisKey(gks[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := cc.Send(frameHello, h.encode()); err != nil {
			t.Fatal(err)
		}
		if _, err := protocol.Recv(cc, frameAccept); err != nil {
			t.Fatal(err)
		}
		if err := cc.Send(framePK, pkb); err != nil {
			t.Fatal(err)
		}
		if err := cc.Send(frameGalois, transport.AppendIndexed(nil, 0, len(s.galois), tc.edit(kb))); err != nil {
			t.Fatal(err)
		}
		if serr := <-errc; !errors.Is(serr, tc.want) {
			t.Errorf("%s key: server %v, want %v", tc.name, serr, tc.want)
		}
		cc.Close()
	}
}
