package compiler_test

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/ir"
)

// TestKeyBatch: instances share a key read as far as their working sets fit
// on chip together, never fewer than one and never more than there are;
// the cost model charges a counted rotation's key once per batch.
func TestKeyBatch(t *testing.T) {
	prof, err := compiler.NewProfiler().Of(ir.OpHRot, "insecure-test", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	work := prof.WorkLimbs * int64(prof.N) * 4 // 32-bit words
	if prof.WorkLimbs < 4 || prof.KeyLimbs == 0 {
		t.Fatalf("rotation profile: %d working limbs, %d key limbs", prof.WorkLimbs, prof.KeyLimbs)
	}
	for _, c := range []struct {
		onChip, count, want int64
	}{
		{work - 1, 100, 1},     // not even one instance fits: one read each
		{10*work + 1, 100, 10}, // ten fit
		{10 * work, 4, 4},      // no more than there are
		{10 * work, 1, 1},
	} {
		if got := compiler.KeyBatch(prof, c.onChip, 32, c.count); got != c.want {
			t.Errorf("KeyBatch(onChip %d, count %d) = %d, want %d", c.onChip, c.count, got, c.want)
		}
	}

	// The host's cost of a counted rotation: key traffic falls with the
	// batch, the compute does not.
	a := rosemary(t)
	cost := func(onChip int64, count int64) float64 {
		b := ir.NewBuilder("rot", "insecure-test")
		b.Output("y", b.HRot(b.InputN("x", 3, count), 1))
		p, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		cm := &compiler.CostModel{Arch: a.Clone(), Prof: compiler.NewProfiler()}
		cm.Arch.Host.OnChipBytes = onChip
		c, err := cm.Cost(p, p.Nodes[1])
		if err != nil {
			t.Fatal(err)
		}
		return c.Host
	}
	one, ten := cost(work-1, 1000), cost(10*work+1, 1000)
	if !(ten < one) {
		t.Errorf("host cost with a 10-instance key batch %.4g s not below one-by-one %.4g s", ten, one)
	}
}
