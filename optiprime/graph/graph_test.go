package graph

import (
	"fmt"
	"sort"
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
)

func TestBuildAndReference(t *testing.T) {
	for _, spec := range []Spec{Mini, MiniBottleneck} {
		n, img, err := Build(spec, 1, Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		out, err := n.Reference(img)
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		if len(out) != spec.Classes {
			t.Fatalf("%s: %d outputs, want %d", spec.Name, len(out), spec.Classes)
		}
		// Seeded: a second build gives the same network and output.
		n2, img2, err := Build(spec, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out2, err := n2.Reference(img2)
		if err != nil {
			t.Fatal(err)
		}
		if n.Digest() != n2.Digest() {
			t.Errorf("%s: digest differs between builds", spec.Name)
		}
		for i := range out {
			if out[i] != out2[i] {
				t.Fatalf("%s: output %d differs between builds", spec.Name, i)
			}
		}
		// Another seed changes the output (the weight scales, public, may
		// change too).
		n3, img3, err := Build(spec, 2, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out3, err := n3.Reference(img3)
		if err != nil {
			t.Fatal(err)
		}
		same := true
		for i := range out {
			same = same && out[i] == out3[i]
		}
		if same || len(n3.Ops) != len(n.Ops) {
			t.Errorf("%s: seed 2 gives the same output or another architecture", spec.Name)
		}
		t.Logf("%s: %d ops, output %v, %+v", spec.Name, len(n.Ops), out, n.Count())
	}
}

// TestResNetShapes builds the ImageNet networks (structure only: no
// weights, no reference, which take seconds) and checks their convolutions
// against package nets' list.
func TestResNetShapes(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		net  nets.Network
	}{{ResNet18, nets.ResNet18()}, {ResNet50, nets.ResNet50()}} {
		b := architecture(c.spec, Options{})
		key := func(s linear.ConvShape) string { return fmt.Sprintf("%+v", s) }
		var got, want []string
		for _, op := range b.n.Ops {
			if op.Kind == Conv {
				got = append(got, key(op.Shape))
			}
		}
		for _, l := range c.net.Layers {
			for i := 0; i < l.Count; i++ {
				want = append(want, key(l.Shape))
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: convolutions differ from package nets:\n got %v\nwant %v", c.spec.Name, got, want)
		}
		st := b.n.Count()
		t.Logf("%s: %d convolutions, %.2f GMACs, %d ReLUs, %d truncations", c.spec.Name, st.Convs, float64(st.MACs)/1e9, st.ReLUs, st.Truncs)
	}
}

func TestWindows(t *testing.T) {
	// 1 channel 3×3, window 3, stride 2, pad 1 → 2×2 outputs.
	idx, out := Windows(Dims{1, 3, 3}, 3, 2, 1)
	if out != (Dims{1, 2, 2}) {
		t.Fatalf("output %+v", out)
	}
	want := []int{-1, -1, -1, -1, 0, 1, -1, 3, 4}
	for i, v := range want {
		if idx[i] != v {
			t.Fatalf("window 0 = %v, want %v", idx[:9], want)
		}
	}
	want = []int{4, 5, -1, 7, 8, -1, -1, -1, -1} // last window
	for i, v := range want {
		if idx[27+i] != v {
			t.Fatalf("window 3 = %v, want %v", idx[27:], want)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	n, _, err := Build(Mini, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bad := func(name string, f func(n *Net)) {
		m := *n
		m.Ops = append([]Op(nil), n.Ops...)
		f(&m)
		if err := m.Validate(); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	bad("forward reference", func(m *Net) { m.Ops[0].In = []int{1} })
	bad("weight out of bound", func(m *Net) { w := append([]int64(nil), m.Ops[0].W...); w[0] = 1000; m.Ops[0].W = w })
	bad("add of mismatched shapes", func(m *Net) {
		for i, op := range m.Ops {
			if op.Kind == Add {
				m.Ops[i].In = []int{op.In[0], 0}
				return
			}
		}
	})
	bad("zero shift", func(m *Net) { m.Ops[1].Shift = 0 })
	bad("tiny ring", func(m *Net) { m.LogT = 4 })
	// A ring too small for the values fails the reference with a named error.
	small, img, err := Build(Mini, 1, Options{LogT: 18})
	if err == nil {
		if _, err = small.Reference(img); err == nil {
			t.Error("ℓ = 18 reference did not overflow")
		}
	}
}
