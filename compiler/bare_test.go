package compiler_test

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// TestBareFollowsSegmentHints: the Bare baseline puts hinted non-linear
// nodes on the host and hinted linear ones on the SSD whatever their
// operation, falls back to the per-operation rule (ciphertext products on
// the host) for unhinted nodes, and bootstrapping expands into a non-linear
// segment.
func TestBareFollowsSegmentHints(t *testing.T) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	b := ir.NewBuilder("hints", "insecure-test")
	q := b.Input("query", 2)
	db := b.Stored("db", 2, 1, false)
	b.Segment(ir.Linear)
	sq := b.MulRelin(b.HSub(db, q), b.HSub(db, q)) // a product, hinted linear
	b.Segment(ir.NonLinear)
	r := b.HRot(sq, 1) // a rotation, hinted non-linear
	b.Segment(ir.Unhinted)
	m := b.MulRelin(r, r) // unhinted product: host by the operation rule
	s := b.HAdd(m, r)     // unhinted addition: SSD by the operation rule
	b.Output("out", s)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: "bare"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[ir.Op][]compiler.Device{}
	for i, n := range plan.Program.Nodes {
		want[n.Op] = append(want[n.Op], plan.Placement[i])
	}
	check := func(op ir.Op, k int, dev compiler.Device) {
		t.Helper()
		if got := want[op]; len(got) <= k || got[k] != dev {
			t.Errorf("%s #%d on %v, want %s", op, k, got, dev)
		}
	}
	check(ir.OpHMult, 0, compiler.SSD)  // hinted linear
	check(ir.OpHRot, 0, compiler.Host)  // hinted non-linear
	check(ir.OpHMult, 1, compiler.Host) // unhinted product
	check(ir.OpHAdd, 0, compiler.SSD)   // unhinted addition

	// A Boot expands into nodes all hinted non-linear.
	bb := ir.NewBuilder("boot", "ckks-16")
	x := bb.Input("x", 3)
	bb.Output("y", bb.Boot(x, ir.BootSpec{OutputLevel: 1, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 9, LogN: 10}))
	bp, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	e, err := compiler.ExpandBoot(bp)
	if err != nil {
		t.Fatal(err)
	}
	expanded := 0
	for _, n := range e.Nodes {
		switch n.Op {
		case ir.OpInput, ir.OpOutput:
			if n.Segment != ir.Unhinted {
				t.Errorf("%s hinted %q", n.Op, n.Segment)
			}
		default:
			expanded++
			if n.Segment != ir.NonLinear {
				t.Errorf("bootstrapping node %d (%s) hinted %q", n.ID, n.Op, n.Segment)
			}
		}
	}
	if expanded < 10 {
		t.Errorf("bootstrapping expanded into %d nodes", expanded)
	}
}
