package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/graph"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// TestPreparedDir: a server that encoded its weights ahead into weight
// files (PrepareDir) serves Cheetah and OptiPrime sessions reading them
// layer by layer; the outputs equal the plaintext reference exactly, the
// sessions encoded nothing and read every file once, and a second
// PrepareDir keeps the files instead of encoding again.
func TestPreparedDir(t *testing.T) {
	n, img, err := graph.Build(graph.Mini, 7, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.Reference(img)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sv := NewServer(n)
	for _, proto := range []linear.Protocol{linear.Cheetah, linear.OptiPrime} {
		if _, err := sv.PrepareDir(proto, 0, dir); err != nil {
			t.Fatal(err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	convs := 0
	for _, op := range n.Ops {
		if op.Kind == graph.Conv {
			convs++
		}
	}
	if len(files) != 2*convs {
		t.Fatalf("%d files in the weight directory, want %d: %v", len(files), 2*convs, files)
	}
	sizes := map[string]int64{}
	stamps := map[string]int64{}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		proto, _, _ := strings.Cut(filepath.Base(f), "-")
		sizes[proto] += fi.Size()
		stamps[f] = fi.ModTime().UnixNano()
	}
	for _, proto := range []linear.Protocol{linear.Cheetah, linear.OptiPrime} {
		cc, sc := transport.Pipe()
		errc := make(chan error, 1)
		go func() { errc <- sv.Serve(sc) }()
		out, rep, err := Infer(cc, n.Public(), img, Config{Protocol: proto})
		if serr := <-errc; serr != nil {
			t.Fatalf("%v server: %v", proto, serr)
		}
		if err != nil {
			t.Fatal(err)
		}
		rep.Check(out, want)
		if !rep.Correct {
			t.Fatalf("%v: %d of %d outputs differ", proto, rep.Mismatches, rep.Outputs)
		}
		if rep.ServerWeightsStreamed != sizes[proto.String()] {
			t.Errorf("%v: the session read %d bytes of weight files, the directory holds %d", proto, rep.ServerWeightsStreamed, sizes[proto.String()])
		}
		if rep.Linear.PrepCPUS != 0 {
			t.Errorf("%v: the session encoded weights for %.3f CPU-s", proto, rep.Linear.PrepCPUS)
		}
		loads := 0
		for _, k := range rep.Profile.Server.Kinds {
			if strings.HasSuffix(k.Kind, KindHEEncode) {
				t.Errorf("%v: the session encoded weights: %+v", proto, k)
			}
			if strings.HasSuffix(k.Kind, KindHELoad) {
				loads += k.Calls
			}
		}
		if loads != convs {
			t.Errorf("%v: %d weight-file waits profiled, want %d (one per convolution)", proto, loads, convs)
		}
	}
	// Prepared again (a restarted server): the files are kept.
	if _, err := NewServer(n).PrepareDir(linear.OptiPrime, 0, dir); err != nil {
		t.Fatal(err)
	}
	for f, st := range stamps {
		fi, err := os.Stat(f)
		if err != nil || fi.ModTime().UnixNano() != st {
			t.Errorf("%s rewritten (%v)", f, err)
		}
	}
}
