package compiler_test

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// TestPlacementRules checks the rules the compiler exports for the
// simulator against hand-computed values.
func TestPlacementRules(t *testing.T) {
	// ckks-14: |Q| = 8, |P| = 2, so dnum = 4 and a key is 2·4·10 = 80 limbs
	// of 2^14 words; at 32-bit words the device stores half: 2,621,440 B.
	r, _, err := lower.NewProfiler().Ring("ckks-14")
	if err != nil {
		t.Fatal(err)
	}
	if got := compiler.StoredKeyBytes(r, 32); got != 80*(1<<14)*4/2 {
		t.Errorf("StoredKeyBytes(ckks-14, 32) = %d, want %d", got, 80*(1<<14)*4/2)
	}
	if got := compiler.StoredKeyBytes(lower.Ring{LogN: 12, Q: []uint64{1}}, 32); got != 0 {
		t.Errorf("a ring without P has a key of %d bytes", got)
	}

	for _, c := range []struct {
		n    ir.Node
		want string
	}{
		{ir.Node{Op: ir.OpRelinearize}, "rlk"},
		{ir.Node{Op: ir.OpConjugate}, "conj"},
		{ir.Node{Op: ir.OpHRot, Rotation: 5}, "rot5"},
		{ir.Node{Op: ir.OpHRot, Rotation: -1}, "rot8191"},
		{ir.Node{Op: ir.OpHRot, Rotation: 8192 + 3}, "rot3"},
		{ir.Node{Op: ir.OpHAdd}, ""},
	} {
		if got := compiler.KeyName(c.n, 8192); got != c.want {
			t.Errorf("KeyName(%s rot %d) = %q, want %q", c.n.Op, c.n.Rotation, got, c.want)
		}
	}

	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	onChip := a.SRAM.CapacityBytes + a.EDRAM.CapacityBytes
	if got := compiler.ResidentCapacity(a, 0); got != onChip {
		t.Errorf("ResidentCapacity without hot keys = %d, want SRAM + eDRAM = %d", got, onChip)
	}
	if got := compiler.ResidentCapacity(a, 10<<20); got != onChip-10<<20 {
		t.Errorf("ResidentCapacity with 10 MiB of hot keys = %d, want %d", got, onChip-10<<20)
	}
	if got := compiler.ResidentCapacity(a, 2*onChip); got != 0 {
		t.Errorf("ResidentCapacity with keys beyond the memory = %d, want 0", got)
	}
}
