package bootconst_test

import (
	"context"
	"testing"

	"github.com/rosemary-fhe/rosemary/engine"
)

// BenchmarkBootstrapOnInterpreter times one logN-10 bootstrapping (full
// slots) on the device interpreter, the DFT products hoisted as Lattigo
// runs them and node by node, beside Lattigo's own Evaluate; it reports
// the interpreter's micro-operations.
func BenchmarkBootstrapOnInterpreter(b *testing.B) {
	f := newFixture(b, 9)
	_, ct := f.message(b)
	p := f.program(b)
	stored, err := f.prov.Stored(p)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		hoisted bool
	}{{"interpreter-hoisted", true}, {"interpreter-node-by-node", false}} {
		b.Run(tc.name, func(b *testing.B) {
			var microOps int64
			for i := 0; i < b.N; i++ {
				x, err := f.ks.Executor(allOnDevice, tc.hoisted)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := x.Run(context.Background(), p, map[string][]engine.Value{"x": {{Ct: ct}}}, stored); err != nil {
					b.Fatal(err)
				}
				microOps = x.Stats.DeviceMicroOps
			}
			b.ReportMetric(float64(microOps), "micro-ops/op")
		})
	}
	b.Run("lattigo", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := f.ev.Evaluate(ct.CopyNew()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
