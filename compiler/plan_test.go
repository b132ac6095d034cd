package compiler_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
)

// The typed sides must keep the plan's JSON in its established form: the
// strings "host" and "ssd" wherever a side is named.
func TestPlanSidesMarshalAsNames(t *testing.T) {
	p := &compiler.Plan{
		Placement: []compiler.Device{compiler.Host, compiler.SSD, compiler.Host},
		Segments:  []compiler.PlanSegment{{Device: compiler.Host, Nodes: []int{0}}, {Device: compiler.SSD, Nodes: []int{1}}},
		Transfers: []compiler.Transfer{{Node: 0, To: compiler.SSD, Bytes: 8}},
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"placement":["host","ssd","host"]`,
		`"segments":[{"device":"host","nodes":[0],"est_s":0},{"device":"ssd","nodes":[1],"est_s":0}]`,
		`"transfers":[{"node":0,"to":"ssd","bytes":8}]`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plan JSON lacks %s:\n%s", want, b)
		}
	}
	var q compiler.Plan
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Placement, p.Placement) || !reflect.DeepEqual(q.Segments, p.Segments) || !reflect.DeepEqual(q.Transfers, p.Transfers) {
		t.Errorf("round trip: got %+v, want %+v", q, *p)
	}
	if err := json.Unmarshal([]byte(`{"placement":["gpu"]}`), &q); err == nil {
		t.Error("unknown side decoded")
	}
	if _, err := json.Marshal(compiler.Plan{Placement: []compiler.Device{7}}); err == nil {
		t.Error("invalid side encoded")
	}
}

// A compiled plan round-trips through JSON with its sides intact.
func TestCompiledPlanRoundTrips(t *testing.T) {
	prog, err := workload.PIRShape{Name: "pir-small", Params: "insecure-test-bgv", Rows: 4, Cols: 4}.Program()
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, prog, rosemary(t), "full")
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var q compiler.Plan
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Placement, plan.Placement) || !reflect.DeepEqual(q.Segments, plan.Segments) {
		t.Errorf("round trip changed the sides: %v / %v", q.Placement, plan.Placement)
	}
	c, err := json.Marshal(&q)
	if err != nil {
		t.Fatal(err)
	}
	if string(c) != string(b) {
		t.Error("re-encoded plan differs")
	}
}
