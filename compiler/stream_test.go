package compiler_test

import (
	"reflect"
	"testing"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/workload"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// bgv13 is the bgv-13 preset and its Lattigo parameters.
func bgv13(t testing.TB) (fhe.Preset, bgv.Parameters) {
	t.Helper()
	pr, err := fhe.Lookup("bgv-13")
	if err != nil {
		t.Fatal(err)
	}
	params, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{LogN: pr.LogN, LogQ: pr.LogQ, LogP: pr.LogP, PlaintextModulus: pr.T})
	if err != nil {
		t.Fatal(err)
	}
	return pr, params
}

// pirStream compiles an expanded-query PIR of rows × cols plaintexts and
// returns its device segment as a stream program.
func pirStream(t testing.TB, rows, cols int64) *lower.StreamProgram {
	t.Helper()
	pr, params := bgv13(t)
	p, err := workload.ExpandedPIR{Name: "pir", Params: "bgv-13", Rows: rows, Cols: cols}.Program()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := arch.Preset("rosemary")
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range plan.Segments {
		if s.OnSSD() {
			sp, err := plan.StreamSegment(i, lower.RingOf(params.Parameters), fhe.BGV, pr.T)
			if err != nil {
				t.Fatal(err)
			}
			return sp
		}
	}
	t.Fatal("no device segment")
	return nil
}

// The PIR scan's device segment streams: the products fold into a
// multiply-accumulate loop, the column selections are held (each is read
// by every row), everything else streams, and only the answer leaves.
func TestStreamSegmentPIR(t *testing.T) {
	sp := pirStream(t, 16, 8)
	var held, out, macs, expands int
	for _, sn := range sp.Nodes {
		if sn.Cache {
			held++
			if sn.Count != 8 {
				t.Errorf("held node %d has %d instances, want the 8 column selections", sn.Node, sn.Count)
			}
		}
		if sn.Out {
			out++
			if sn.Count != 1 || sn.Limbs != 1 {
				t.Errorf("out node %d: %d instances of %d limbs, want the level-0 answer", sn.Node, sn.Count, sn.Limbs)
			}
		}
		if sn.MAC != nil {
			macs++
			if sn.Products != 16*8 || sn.Count != 16 {
				t.Errorf("multiply-accumulate of %d products into %d sums, want 128 into 16", sn.Products, sn.Count)
			}
		}
		if sn.Kind == lower.StreamExpand {
			expands++
		}
	}
	if held != 1 || out != 1 || macs != 1 || expands != 2 {
		t.Fatalf("held %d, out %d, multiply-accumulates %d, expansions %d; want 1, 1, 1, 2", held, out, macs, expands)
	}
	b, err := sp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back lower.StreamProgram
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if len(back.Nodes) != len(sp.Nodes) {
		t.Fatalf("decoded %d nodes, want %d", len(back.Nodes), len(sp.Nodes))
	}
}

// A device decodes stream programs from the wire: any bytes decode to an
// error or a program that validates, never a panic.
func FuzzStreamProgram(f *testing.F) {
	b, err := pirStream(f, 16, 8).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"nodes":[{"kind":3,"count":1,"polys":2,"limbs":1,"args":[0]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var sp lower.StreamProgram
		if sp.UnmarshalBinary(data) != nil {
			return
		}
		if err := sp.Validate(); err != nil {
			t.Fatalf("decoded a program that does not validate: %v", err)
		}
	})
}

// A session binds the stream's sources by role: the workload builder marks
// the query and the database, and the roles reach the stream nodes.
func TestStreamSegmentCarriesRoles(t *testing.T) {
	p, err := workload.ExpandedPIR{Name: "pir", Params: "bgv-13", Rows: 4, Cols: 4}.Program()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := arch.Preset("rosemary")
	plan, err := compiler.Compile(p, a, compiler.Options{Opt: "full"})
	if err != nil {
		t.Fatal(err)
	}
	pr, params := bgv13(t)
	plan, seg := plan.AllOnDevice()
	sp, err := plan.StreamSegment(seg, lower.RingOf(params.Parameters), fhe.BGV, pr.T)
	if err != nil {
		t.Fatal(err)
	}
	got := map[ir.Role][]string{}
	for _, sn := range sp.Nodes {
		if sn.Role != ir.NoRole {
			got[sn.Role] = append(got[sn.Role], sn.Kind.String()+" "+sn.Name)
		}
	}
	want := map[ir.Role][]string{ir.RoleQuery: {lower.StreamInput.String() + " query"}, ir.RoleDatabase: {lower.StreamStored.String() + " database"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("roles %v, want %v", got, want)
	}
}
