package ir

import (
	"strings"
	"testing"
)

// The branch taken at depth j on the way to leaf k is bit j of the
// coefficient index the leaf stands for, every leaf stands for a distinct
// index, and consecutive leaves differ first at the deepest level they can.
func TestExpandSpecBranches(t *testing.T) {
	for _, c := range []struct {
		spec  ExpandSpec
		count int64
	}{{ExpandSpec{Prefix: 1, PrefixBits: 1}, 8}, {ExpandSpec{Prefix: 0, PrefixBits: 1}, 16}, {ExpandSpec{}, 4}, {ExpandSpec{Prefix: 5, PrefixBits: 3}, 1}} {
		d := c.spec.Depth(c.count)
		seen := map[uint64]bool{}
		for k := int64(0); k < c.count; k++ {
			idx := c.spec.Coefficient(c.count, k)
			if seen[idx] {
				t.Fatalf("%+v: coefficient %d twice", c, idx)
			}
			seen[idx] = true
			if idx>>d != 0 {
				t.Fatalf("%+v: leaf %d stands for coefficient %d beyond depth %d", c, k, idx, d)
			}
			for j := 0; j < d; j++ {
				if got := c.spec.Branch(c.count, k, j); got != int(idx>>j)&1 {
					t.Fatalf("%+v: leaf %d depth %d: branch %d, coefficient %d", c, k, j, got, idx)
				}
			}
			if k > 0 {
				// Depth-first order: leaf k−1 and k share the path down to
				// the level of the highest bit that changed.
				first := -1
				for j := 0; j < d; j++ {
					if c.spec.Branch(c.count, k-1, j) != c.spec.Branch(c.count, k, j) {
						first = j
						break
					}
				}
				want := d - 1 - trailingOnes(k-1)
				if first != want {
					t.Fatalf("%+v: leaves %d, %d part at depth %d, want %d", c, k-1, k, first, want)
				}
			}
		}
	}
	if got := (ExpandSpec{Prefix: 1, PrefixBits: 1}).Coefficient(4, 1); got != 1+2*2 {
		t.Fatalf("leaf 1 of 4 after prefix 1: coefficient %d, want 5", got)
	}
}

func trailingOnes(x int64) int {
	n := 0
	for ; x&1 == 1; x >>= 1 {
		n++
	}
	return n
}

func TestExpandValidation(t *testing.T) {
	build := func(count int64, spec ExpandSpec) error {
		b := NewBuilder("x", "bgv-13")
		q := b.Input("q", 2)
		b.Output("o", b.Expand(q, count, spec))
		_, err := b.Build()
		return err
	}
	if err := build(8, ExpandSpec{Prefix: 1, PrefixBits: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		count int64
		spec  ExpandSpec
		want  string
	}{
		{6, ExpandSpec{}, "power of two"},
		{1, ExpandSpec{}, "depth 0"},
		{1 << 12, ExpandSpec{Prefix: 0, PrefixBits: 1}, "depth 13"},
		{4, ExpandSpec{Prefix: 2, PrefixBits: 1}, "does not fit"},
	} {
		err := build(c.count, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("count %d %+v: %v, want %q", c.count, c.spec, err, c.want)
		}
	}
}
