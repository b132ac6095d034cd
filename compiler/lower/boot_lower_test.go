package lower

import (
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// The lowerings the bootstrapping adds name what is wrong with their input.
func TestBootLoweringsRefuseBadInput(t *testing.T) {
	_, params := fhetest.CKKSParams(t, "insecure-test")
	r := RingOf(params.Parameters)
	ones := func(n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	for _, tc := range []struct {
		c    Constant
		want string
	}{
		{Constant{Mul: [2][]uint64{ones(2), ones(2)}}, "multiplier residues"},
		{Constant{Mul: [2][]uint64{ones(3), ones(3)}, Add: [2][]uint64{ones(2), ones(3)}}, "addend residues"},
		{Constant{Mul: [2][]uint64{{r.Q[0], 1, 1}, ones(3)}}, "not reduced"},
		{Constant{Mul: [2][]uint64{ones(3), ones(3)}, Add: [2][]uint64{ones(3), {2, 1, 1}}}, "complex addend"},
	} {
		if _, err := ConstantOp(r, 2, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.c, err, tc.want)
		}
	}
	if l, err := ConstantOp(r, 2, Constant{Mul: [2][]uint64{ones(3), {2, 2, 2}}}); err != nil || len(l.Inputs) != 2 {
		t.Errorf("a constant whose halves differ reads its multiplier as a vector: %v, %v", l, err)
	}
	ctx := &Context{Scheme: fhe.CKKS, Ring: r, Level: 2}
	if _, err := AddMixed(ctx, false, 1, 3); err == nil || !strings.Contains(err.Error(), "mixed addition") {
		t.Errorf("mixed addition of a 1-polynomial operand: %v", err)
	}
	if _, err := LinearTransform(r, 2, 8, nil); err == nil || !strings.Contains(err.Error(), "without diagonals") {
		t.Errorf("linear transform without diagonals: %v", err)
	}
}
