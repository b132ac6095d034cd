package workload

import (
	"context"
	"testing"

	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// The helpers here are defined in a test file, for the tests of this
// package and of package workload_test alike.

// GaloisElementsForTest returns the Galois elements of the rotations and
// conjugations in p under params: the Galois keys a test needs to execute p.
func GaloisElementsForTest(params ckks.Parameters, p *ir.Program) []uint64 {
	return engine.GaloisElements(params.Parameters, p)
}

// ExecuteForTest runs p on engine.Executor with c's preset and parameters
// and the given keys, failing t on any error.
func ExecuteForTest(t testing.TB, c *fhetest.CKKS, keys engine.Keys, p *ir.Program, in, st map[string][]engine.Value) map[string][]engine.Value {
	t.Helper()
	x, err := engine.NewExecutor(c.Preset, c.Params, keys)
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.Run(context.Background(), p, in, st)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
