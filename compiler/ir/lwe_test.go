package ir

import (
	"strings"
	"testing"
)

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
