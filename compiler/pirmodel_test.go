package compiler_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// The cost of pir-lwe's scan (64 blocks of 8192 rows × 8192 bytes) on the
// Rosemary engine, by hand: 64 × 2048 LWEMACs of 16 cycles (4·8192 bytes
// over 2048 lanes) = 2,097,152 cycles at 1 GHz; 4 GiB from flash at 16 ×
// 2.4 GB/s; the 2 MiB query and the 32 KiB accumulator written once, both
// on chip (SRAM, 24,576 GB/s).
func TestLWEScanCost(t *testing.T) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	b := ir.NewBuilder("scan", "lwepir-hint")
	b.Output("column", b.LWEScan(b.LWEQuery("query", 64), b.StoredLWEMatrix("database", 13, 64)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	cm := &compiler.CostModel{Arch: a, Prof: lower.NewProfiler()}
	c, err := cm.Cost(p, p.Nodes[2])
	if err != nil {
		t.Fatal(err)
	}
	want := 2097152e-9 + 4294967296/38.4e9 + (2097152+32768)/24576e9
	if math.Abs(c.SSD-want) > 1e-9*want {
		t.Errorf("SSD cost %.9g s, want %.9g s", c.SSD, want)
	}
}

// The compiled model of an LWE PIR answer (what simulate and reproduce
// cost) runs whole on the device — the scan, the ring stage's R
// plaintext products and its rescale — with only the query in and the
// answer out on the host, for small and large shapes of both parameter
// sets; and it has no stream program (the device answers natively).
func TestLWEPlanRunsWholeOnTheDevice(t *testing.T) {
	for _, c := range []struct {
		p                   lwepir.Params
		records, recordSize int
	}{
		{lwepir.Test(), 1, 48},
		{lwepir.Test(), 3000, 48},
		{lwepir.Test(), 20000, 1024},
		{lwepir.Default(), 1 << 24, 256},
	} {
		shape, err := lwepir.NewShape(c.p, c.records, c.recordSize)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%s/%dx%d", c.p.Name(), shape.Rows, shape.Cols), func(t *testing.T) {
			prog, err := workload.LWEPIR{Name: "lwepir", Params: c.p, Shape: shape}.Program()
			if err != nil {
				t.Fatal(err)
			}
			plan, seg := compile(t, prog, rosemary(t), "full").AllOnDevice()
			if len(plan.Segments) != 3 || seg != 1 {
				t.Fatalf("%d segments, device segment %d; want inputs, device, outputs", len(plan.Segments), seg)
			}
			ops := map[ir.Op]int{}
			for i, s := range plan.Segments {
				for _, v := range s.Nodes {
					n := plan.Program.Nodes[v]
					if onHost := n.Op == ir.OpInput || n.Op == ir.OpOutput; onHost == s.OnSSD() {
						t.Errorf("segment %d (device %v) holds node %d (%s)", i, s.Device, v, n.Op)
					}
					if s.OnSSD() {
						ops[n.Op]++
					}
					if n.Op == ir.OpLWEScan && *n.LWE != (ir.LWESpec{Params: c.p.Name(), Rows: shape.Rows, Cols: shape.Cols, RecordSize: c.recordSize}) {
						t.Fatalf("the plan scans database %+v, want %+v", *n.LWE, shape)
					}
				}
			}
			if ops[ir.OpLWEScan] != 1 || ops[ir.OpPMult] != shape.Layout(c.p).R*shape.Layout(c.p).Outputs || ops[ir.OpRescale] != shape.Layout(c.p).Outputs {
				t.Fatalf("device segment ops %v", ops)
			}
			logN, q, pp, hintT, err := c.p.HintRing()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := plan.StreamSegment(seg, lower.Ring{LogN: logN, Q: q, P: pp}, fhe.BGV, hintT); !errors.Is(err, compiler.ErrLWESegment) {
				t.Fatalf("a stream program of the LWE segment: %v, want ErrLWESegment", err)
			}
		})
	}
}
