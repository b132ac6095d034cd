package ir

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/internal/jsontest"
)

func sampleProgram(t *testing.T) *Program {
	t.Helper()
	b := NewBuilder("sample", "insecure-test")
	q := b.Input("query", 5)
	db := b.Stored("db", 5, 1000, true)
	prod := b.PMult(q, db)
	s := b.Sum(prod, 1)
	sq := b.Rescale(b.MulRelin(s, s))
	r := b.HRot(sq, 3)
	b.Output("answer", b.HAdd(r, b.Conjugate(sq)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuilderAndJSONRoundTrip(t *testing.T) {
	p := sampleProgram(t)
	if got := p.Nodes[2].Count; got != 1000 {
		t.Fatalf("PMult count %d, want the database's 1000", got)
	}
	if p.Nodes[len(p.Nodes)-1].Level != 4 {
		t.Fatalf("output level %d, want 4", p.Nodes[len(p.Nodes)-1].Level)
	}
	if q := jsontest.RoundTrip(t, p); !reflect.DeepEqual(p, q) {
		t.Fatalf("JSON round trip differs")
	}
	bytes, err := p.Bytes(p.Nodes[0], 32)
	if err != nil || bytes != 2*6*2048*4 {
		t.Fatalf("ciphertext bytes %d (%v), want %d", bytes, err, 2*6*2048*4)
	}
}

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name string
		mut  func(p *Program)
		want string
	}{
		{"dangling", func(p *Program) { p.Nodes[2].Args[0] = 99 }, "dangling argument 99"},
		{"cycle", func(p *Program) { p.Nodes[0].Op = OpHRot; p.Nodes[0].Args = []int{4} }, "cycle"},
		{"params", func(p *Program) { p.Nodes[1].Params = "ckks-14" }, "parameter mismatch"},
		{"level", func(p *Program) { p.Nodes[5].Level = 3 }, "level mismatch"},
		{"type", func(p *Program) { p.Nodes[2].Args = []int{1, 0} }, "must be a ciphertext"},
		{"plaintext", func(p *Program) { p.Nodes[1].Degree = 1 }, "must be a plaintext"},
		{"arity", func(p *Program) { p.Nodes[3].Args = nil }, "takes 1 argument"},
		{"unknown op", func(p *Program) { p.Nodes[3].Op = "Frob" }, "unknown operation"},
		{"unknown params", func(p *Program) { p.Nodes[0].Params = "nope" }, "unknown preset"},
		{"count", func(p *Program) { p.Nodes[0].Count = 7 }, "does not divide"},
		{"unused", func(p *Program) {
			p.Nodes = append(p.Nodes, Node{ID: len(p.Nodes), Op: OpInput, Name: "extra", Params: "insecure-test", Level: 5, Degree: 1, Count: 1})
		}, "never used"},
		{"rescale at 0", func(p *Program) {
			for i := range p.Nodes[:5] {
				p.Nodes[i].Level = 0
			}
		}, "level"},
	}
	for _, c := range cases {
		p := sampleProgram(t)
		c.mut(p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want error containing %q", c.name, err, c.want)
		}
	}
	b := NewBuilder("order", "insecure-test")
	a := b.Input("a", 5)
	x, y := b.HRot(a, 1), b.HRot(a, 2)
	b.Output("o", b.HAdd(x, y))
	p2, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p2.Nodes[1].Args = []int{2}
	if err := p2.Validate(); err == nil || !strings.Contains(err.Error(), "topological order") {
		t.Errorf("order: %v", err)
	}
	var p Program
	if err := json.Unmarshal([]byte(`{"name":"x","nodes":[{"id":0,"op":"Output","args":[3]}]}`), &p); err == nil {
		t.Fatal("decoded an invalid program")
	}
}

func FuzzProgramJSON(f *testing.F) {
	p := sampleProgram(&testing.T{})
	b, _ := json.Marshal(p)
	f.Add(b)
	// Segment hints and a compact stored plaintext.
	f.Add([]byte(`{"name":"c","nodes":[{"id":0,"op":"Input","params":"insecure-test-bgv","level":3,"degree":1,"count":1,"name":"q","segment":"linear"},` +
		`{"id":1,"op":"Stored","params":"insecure-test-bgv","level":3,"degree":0,"count":4,"name":"db","compact":true},` +
		`{"id":2,"op":"PMult","args":[0,1],"params":"insecure-test-bgv","level":3,"degree":1,"count":4,"segment":"nonlinear"},` +
		`{"id":3,"op":"Sum","args":[2],"params":"insecure-test-bgv","level":3,"degree":1,"count":1},` +
		`{"id":4,"op":"Output","args":[3],"params":"insecure-test-bgv","level":3,"degree":1,"count":1,"name":"y"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var q Program
		if err := json.Unmarshal(data, &q); err != nil {
			return
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("decoded program does not validate: %v", err)
		}
	})
}

func TestPublicConstants(t *testing.T) {
	b := NewBuilder("c", "insecure-test")
	x := b.Input("x", 5)
	b.Output("y", b.PMult(x, b.Constant("mask", 5, 1)))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !p.Nodes[1].Public || p.Nodes[1].Op != OpStored {
		t.Fatalf("constant node %+v", p.Nodes[1])
	}
	p.Nodes[0].Public = true
	if err := p.Validate(); err == nil {
		t.Fatal("a public Input was accepted")
	}
}

// lweProgram: an LWE scan of 3 blocks beside a windowed BSGS-style product
// (N = 2^10 on insecure-lwepir-hint-test: matrix blocks of 256 limbs).
func lweProgram(t *testing.T) *Program {
	t.Helper()
	b := NewBuilder("lwe", "insecure-lwepir-hint-test")
	q := b.LWEQuery("query", 3)
	d := b.StoredLWEMatrix("database", 10, 3)
	b.Output("column", b.LWEScan(q, d))
	x := b.Input("secret", 1)
	diags := b.Stored("diagonals", 1, 4, true)
	acc := b.PMultAt(x, diags, 0)
	acc = b.HAdd(acc, b.PMultAt(b.HRot(x, 1), diags, 3))
	b.Output("hint", b.Rescale(acc))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLWEValidation(t *testing.T) {
	p := lweProgram(t)
	if p.Nodes[2].Op != OpLWEScan || p.Nodes[2].Count != 1 || p.Nodes[3].LWELimbs != 1 {
		t.Fatalf("scan %+v, column %+v", p.Nodes[2], p.Nodes[3])
	}
	// Bytes: 4 per word whatever the word width; the matrix N² = 2^20 per block.
	for _, bits := range []int{32, 36, 64} {
		if b := InstanceBytes(p.Nodes[1], 10, bits); b != 1<<20 {
			t.Errorf("matrix block of %d B at %d-bit words, want 2^20", b, bits)
		}
		if b := InstanceBytes(p.Nodes[3], 10, bits); b != 4096 {
			t.Errorf("column of %d B at %d-bit words, want 4096", b, bits)
		}
	}
	cases := []struct {
		name string
		mut  func(p *Program)
		want string
	}{
		{"lwe into ring op", func(p *Program) { p.Nodes[9].Args = []int{6, 2} }, "only scanned"},
		{"ring value scanned", func(p *Program) { p.Nodes[1].LWELimbs = 0 }, "LWEScan takes"},
		{"block counts", func(p *Program) { p.Nodes[0].Count = 1 }, "want equal blocks"},
		{"matrix limbs", func(p *Program) { p.Nodes[1].LWELimbs = 16 }, "N/4 = 256"},
		{"lwe level", func(p *Program) { p.Nodes[1].Level = 1 }, "level 0"},
		{"window beyond", func(p *Program) { p.Nodes[8].StoredOffset = 4 }, "window [4, 5)"},
		{"window on add", func(p *Program) { p.Nodes[9].Window = true }, "only a PMult"},
		{"offset without window", func(p *Program) { p.Nodes[8].Window = false }, "only a PMult"},
		{"output form", func(p *Program) { p.Nodes[3].LWELimbs = 0 }, "output of an LWE value"},
		{"database of other blocks", func(p *Program) { p.Nodes[2].LWE = &LWESpec{"test", 64, 1024, 48} }, "not database"},
		{"database of other params", func(p *Program) { p.Nodes[2].LWE = &LWESpec{"default", 64, 3 * 2048, 48} }, "not database"},
		{"database of no params", func(p *Program) { p.Nodes[2].LWE = &LWESpec{"", 64, 3072, 48} }, "invalid parameters"},
		{"database on a PMult", func(p *Program) { p.Nodes[8].LWE = &LWESpec{"test", 64, 3072, 48} }, "only an LWE scan"},
	}
	// The database of the scan's 3 blocks of 1024 columns (Test: N = 256).
	q := lweProgram(t)
	q.Nodes[2].LWE = &LWESpec{"test", 64, 3072, 48}
	if err := q.Validate(); err != nil {
		t.Fatalf("the scan's own database: %v", err)
	}
	for _, c := range cases {
		q := lweProgram(t)
		c.mut(q)
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
