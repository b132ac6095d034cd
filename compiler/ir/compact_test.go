package ir

import (
	"strings"
	"testing"
)

// TestCompactStored: a compact stored plaintext is one limb whatever its
// level, and is accepted only as the plaintext operand of a PMult, in a
// BGV program, on a non-public stored plaintext.
func TestCompactStored(t *testing.T) {
	b := NewBuilder("c", "insecure-test-bgv")
	q := b.Input("q", 3)
	db := b.StoredCompact("db", 3, 4)
	b.Output("y", b.Sum(b.PMult(q, db), 1))
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	n := p.Nodes[db]
	got, err := p.Bytes(n, 64)
	if err != nil {
		t.Fatal(err)
	}
	full := n
	full.Compact = false
	want, err := p.Bytes(full, 64)
	if err != nil {
		t.Fatal(err)
	}
	if got*4 != want { // level 3: four limbs in RNS form, one compact
		t.Errorf("compact bytes %d, RNS bytes %d", got, want)
	}

	bad := func(name string, build func(b *Builder), msg string) {
		t.Helper()
		b := NewBuilder(name, "insecure-test-bgv")
		build(b)
		if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error containing %q", name, err, msg)
		}
	}
	bad("first operand", func(b *Builder) {
		db := b.StoredCompact("db", 3, 1)
		b.Output("y", b.PMult(db, b.Input("q", 3)))
	}, "only be the plaintext operand of a PMult")
	bad("added", func(b *Builder) {
		db := b.StoredCompact("db", 3, 1)
		b.Output("y", b.HAdd(b.Input("q", 3), db))
	}, "only be the plaintext operand of a PMult")
	ck := NewBuilder("ckks", "insecure-test")
	cdb := ck.StoredCompact("db", 3, 1)
	ck.Output("y", ck.PMult(ck.Input("q", 3), cdb))
	if _, err := ck.Build(); err == nil || !strings.Contains(err.Error(), "BGV") {
		t.Errorf("CKKS compact plaintext: %v", err)
	}
	p.Nodes[db].Public = true
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "compact") {
		t.Errorf("public compact plaintext: %v", err)
	}
}
