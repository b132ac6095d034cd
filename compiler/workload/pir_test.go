package workload_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// A batch of PIR queries shares one stored database and gives each query
// its own selections, chain and answer; batch 1 is the plain scan.
func TestPIRBatched(t *testing.T) {
	s := workload.PIRShape{Name: "pir-small", Params: "insecure-test-bgv", Rows: 4, Cols: 4}
	one, err := s.Batched(1)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.Program()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, plain) {
		t.Error("Batched(1) is not Program()")
	}
	p, err := s.Batched(3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "pir-small-b3" || len(p.Nodes) != 1+3*9 {
		t.Fatalf("program %s of %d nodes, want pir-small-b3 of %d", p.Name, len(p.Nodes), 1+3*9)
	}
	db := p.Nodes[0]
	if db.Op != ir.OpStored || db.Name != "database" || db.Role != ir.RoleDatabase || !db.Compact || db.Count != 16 {
		t.Errorf("first node %+v, want the compact database of 16 plaintexts", db)
	}
	var answers []string
	queries := 0
	for _, n := range p.Nodes {
		switch n.Op {
		case ir.OpStored:
			if n.ID != 0 {
				t.Errorf("second stored node %d", n.ID)
			}
		case ir.OpInput:
			if n.Role != ir.RoleQuery {
				t.Errorf("input %s without the query role", n.Name)
			}
			queries++
		case ir.OpPMult:
			if n.Args[1] != 0 {
				t.Errorf("PMult %d reads %d, not the shared database", n.ID, n.Args[1])
			}
		case ir.OpOutput:
			answers = append(answers, n.Name)
		}
	}
	if queries != 6 || !reflect.DeepEqual(answers, []string{"answer/0", "answer/1", "answer/2"}) {
		t.Errorf("%d query inputs and answers %v", queries, answers)
	}
}

// pir-lwe at full scale is lwepir's answer for bench pir's 4 GiB of
// 256-byte records: an 8192 × 524288 byte matrix (64 blocks of 8192
// columns), and the ring stage of its layout, B1 = 64 baby steps, B2 = 32
// giant steps, one output (R = N = 2048: no rotate-and-sum).
func TestLWEPIRProgram(t *testing.T) {
	p, err := workload.Program("pir-lwe")
	if err != nil {
		t.Fatal(err)
	}
	ops := map[ir.Op]int{}
	rot := map[int]int{}
	var db, query ir.Node
	diags, windowed := 0, 0
	for _, n := range p.Nodes {
		ops[n.Op]++
		switch {
		case n.Op == ir.OpHRot:
			rot[n.Rotation]++
		case n.Op == ir.OpStored && n.Role == ir.RoleDatabase:
			db = n
		case n.Op == ir.OpStored:
			diags += int(n.Count)
		case n.Op == ir.OpInput && n.LWELimbs > 0:
			query = n
		case n.Op == ir.OpPMult && n.Window:
			windowed++
		}
	}
	want := map[ir.Op]int{ir.OpInput: 2, ir.OpStored: 33, ir.OpLWEScan: 1, ir.OpPMult: 2048, ir.OpHAdd: 32*63 + 31,
		ir.OpHRot: 63 + 31, ir.OpRescale: 1, ir.OpOutput: 2}
	for op, k := range want {
		if ops[op] != k {
			t.Errorf("%d %s nodes, want %d", ops[op], op, k)
		}
	}
	if len(ops) != len(want) || rot[1] != 63 || rot[64] != 31 || len(rot) != 2 {
		t.Errorf("operations %v, rotations %v", ops, rot)
	}
	if diags != 2048 || windowed != 2048 {
		t.Errorf("%d stored diagonals read by %d windowed PMults, want 2048", diags, windowed)
	}
	// Flash bytes are the matrix's bytes (4 GiB), the query 4 bytes per
	// column, at any word width; a diagonal is 2 limbs of 8192 words (64 KiB
	// at 32-bit words).
	for _, bits := range []int{32, 36} {
		if b := ir.InstanceBytes(db, 13, bits) * db.Count; b != 1<<32 {
			t.Errorf("database of %d B at %d-bit words, want 2^32", b, bits)
		}
		if b := ir.InstanceBytes(query, 13, bits) * query.Count; b != 4*524288 {
			t.Errorf("query of %d B, want 2 MiB", b)
		}
	}
	if db.Count != 64 || db.LWELimbs != 2048 || db.Compact {
		t.Errorf("database node %+v", db)
	}
	if b, _ := p.Bytes(ir.Node{Op: ir.OpStored, Params: "lwepir-hint", Level: 1, Degree: 0}, 32); b != 65536 {
		t.Errorf("a diagonal of %d B at 32-bit words, want 65536", b)
	}
	// lwepir stores the same matrix and 2048 diagonals of 64-bit words.
	shape, _ := lwepir.NewShape(lwepir.Default(), 1<<24, 256)
	if shape.Rows != 8192 || shape.Cols != 524288 || shape.StoredBytes(lwepir.Default()) != 1<<32+2048*2*8192*8 {
		t.Errorf("lwepir shape %+v stores %d B", shape, shape.StoredBytes(lwepir.Default()))
	}
}

// The small form (lwepir.Test, 64 rows: R = 16 rows per block of N = 256,
// B1 = B2 = 4) sums the partial row sums by rotations by 16, 32, 64 and
// 128; and the hint ring must be the parameters'.
func TestLWEPIRPreset(t *testing.T) {
	p, err := workload.Program("pir-lwe:small")
	if err != nil {
		t.Fatal(err)
	}
	rot := map[int]int{}
	pmults := 0
	for _, n := range p.Nodes {
		if n.Op == ir.OpHRot {
			rot[n.Rotation]++
		}
		if n.Op == ir.OpPMult {
			pmults++
		}
	}
	if want := map[int]int{1: 3, 4: 3, 16: 1, 32: 1, 64: 1, 128: 1}; len(rot) != len(want) || pmults != 16 {
		t.Errorf("rotations %v and %d PMults, want %v and 16", rot, pmults, want)
	} else {
		for k, c := range want {
			if rot[k] != c {
				t.Errorf("%d rotations by %d, want %d", rot[k], k, c)
			}
		}
	}
	shape, _ := lwepir.NewShape(lwepir.Default(), 1<<20, 256)
	for _, preset := range []string{"pir-bgv", "insecure-lwepir-hint-test"} {
		_, err := workload.LWEPIR{Name: "x", Preset: preset, Params: lwepir.Default(), Shape: shape}.Program()
		if err == nil || !strings.Contains(err.Error(), "not the hint ring") {
			t.Errorf("preset %s: %v", preset, err)
		}
	}
}
