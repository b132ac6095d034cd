package workload_test

import (
	"reflect"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
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
