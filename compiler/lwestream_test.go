package compiler_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// lwePlan compiles the LWE PIR answer of shape for the Rosemary engine,
// every operation on the device, and returns the plan, its device segment
// and the hint ring.
func lwePlan(t *testing.T, p lwepir.Params, shape lwepir.Shape) (*compiler.Plan, int, lower.Ring, uint64) {
	t.Helper()
	prog, err := workload.LWEPIR{Name: "lwepir", Params: p, Shape: shape}.Program()
	if err != nil {
		t.Fatal(err)
	}
	plan, seg := compile(t, prog, rosemary(t), "full").AllOnDevice()
	logN, q, pp, hintT, err := p.HintRing()
	if err != nil {
		t.Fatal(err)
	}
	return plan, seg, lower.Ring{LogN: logN, Q: q, P: pp}, hintT
}

// The device segment of a compiled pir-lwe plan is, byte for byte, the
// native answer program of its database (lower.LWEProgram, labelled with
// the segment), for small and large shapes of both parameter sets: the
// host sends the query and the encrypted secret, the device scans and
// evaluates the hint, the host receives the column and the hint.
func TestLWEStreamSegmentIsTheAnswerProgram(t *testing.T) {
	for _, c := range []struct {
		p                   lwepir.Params
		records, recordSize int
	}{
		{lwepir.Test(), 1, 48},
		{lwepir.Test(), 3000, 48},
		{lwepir.Test(), 4096, 64},
		{lwepir.Test(), 20000, 1024},
		{lwepir.Default(), 1 << 24, 256},
	} {
		shape, err := lwepir.NewShape(c.p, c.records, c.recordSize)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%s/%dx%d", c.p.Name(), shape.Rows, shape.Cols), func(t *testing.T) {
			plan, seg, ring, hintT := lwePlan(t, c.p, shape)
			sp, err := plan.StreamSegment(seg, ring, fhe.BGV, hintT)
			if err != nil {
				t.Fatal(err)
			}
			want, err := lower.LWEProgram("lwepir", c.p, shape)
			if err != nil {
				t.Fatal(err)
			}
			want.Segment = seg
			got, _ := sp.MarshalBinary()
			exp, _ := want.MarshalBinary()
			if string(got) != string(exp) {
				t.Fatalf("compiled program\n%s\nwant\n%s", got, exp)
			}
			var back lower.StreamProgram
			if err := back.UnmarshalBinary(got); err != nil {
				t.Fatalf("the device's validation refuses the compiled program: %v", err)
			}
			if len(plan.Segments) != 3 || seg != 1 {
				t.Fatalf("%d segments, device segment %d; want inputs, device, outputs", len(plan.Segments), seg)
			}
			for i, s := range plan.Segments {
				for _, v := range s.Nodes {
					op := plan.Program.Nodes[v].Op
					if onHost := op == ir.OpInput || op == ir.OpOutput; onHost == s.OnSSD() {
						t.Errorf("segment %d (device %v) holds node %d (%s)", i, s.Device, v, op)
					}
				}
			}
		})
	}
}

// A plan whose LWE segment is not its database's answer — its shape or
// its nodes changed, part of it off the device, keys of another ring — has
// no stream program: StreamSegment refuses it with ErrLWESegment.
func TestLWEStreamSegmentRefusesTamperedPlans(t *testing.T) {
	p := lwepir.Test()
	shape, err := lwepir.NewShape(p, 3000, 48)
	if err != nil {
		t.Fatal(err)
	}
	find := func(plan *compiler.Plan, match func(ir.Node) bool) *ir.Node {
		for i := range plan.Program.Nodes {
			if match(plan.Program.Nodes[i]) {
				return &plan.Program.Nodes[i]
			}
		}
		t.Fatal("no such node")
		return nil
	}
	scan := func(n ir.Node) bool { return n.Op == ir.OpLWEScan }
	cases := map[string]func(plan *compiler.Plan, seg int, ring *lower.Ring, hintT *uint64){
		"more columns": func(plan *compiler.Plan, _ int, _ *lower.Ring, _ *uint64) {
			find(plan, scan).LWE.Cols += 4 * p.HintSlots()
		},
		"another record size": func(plan *compiler.Plan, _ int, _ *lower.Ring, _ *uint64) { find(plan, scan).LWE.RecordSize = 1 << 20 },
		"no database":         func(plan *compiler.Plan, _ int, _ *lower.Ring, _ *uint64) { find(plan, scan).LWE = nil },
		"more rows": func(plan *compiler.Plan, _ int, _ *lower.Ring, _ *uint64) {
			find(plan, scan).LWE.Rows *= 4 // a layout of more hint rows than the ring stage evaluates
		},
		"another rotation": func(plan *compiler.Plan, _ int, _ *lower.Ring, _ *uint64) {
			find(plan, func(n ir.Node) bool { return n.Op == ir.OpHRot }).Rotation = 3
		},
		"a giant step fewer": func(plan *compiler.Plan, _ int, _ *lower.Ring, _ *uint64) {
			find(plan, func(n ir.Node) bool { return n.Op == ir.OpStored && n.LWELimbs == 0 }).Count--
		},
		"rescale on the host": func(plan *compiler.Plan, seg int, _ *lower.Ring, _ *uint64) {
			r := find(plan, func(n ir.Node) bool { return n.Op == ir.OpRescale }).ID
			s := &plan.Segments[seg]
			for i, v := range s.Nodes {
				if v == r {
					s.Nodes = append(s.Nodes[:i:i], s.Nodes[i+1:]...)
				}
			}
		},
		"another plaintext modulus": func(_ *compiler.Plan, _ int, _ *lower.Ring, hintT *uint64) { *hintT = 65537 },
		"another ring":              func(_ *compiler.Plan, _ int, ring *lower.Ring, _ *uint64) { ring.Q = ring.Q[:1] },
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			plan, seg, ring, hintT := lwePlan(t, p, shape)
			tamper(plan, seg, &ring, &hintT)
			sp, err := plan.StreamSegment(seg, ring, fhe.BGV, hintT)
			if !errors.Is(err, compiler.ErrLWESegment) {
				t.Fatalf("got %v, %v; want ErrLWESegment", sp, err)
			}
		})
	}
}
