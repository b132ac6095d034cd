package bootconst

import (
	"testing"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"

	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// BenchmarkBootstrapOnInterpreter times one logN-10 bootstrapping (full
// slots) on the device interpreter, the DFT products hoisted as Lattigo
// runs them and node by node, beside Lattigo's own Evaluate; it reports
// the interpreter's micro-operations.
func BenchmarkBootstrapOnInterpreter(b *testing.B) {
	f := newFixture(b, bootstrapping.ParametersLiteral{})
	_, ct := f.message(b)
	p := f.program(b)
	pr, err := fhe.Lookup(bootPreset)
	if err != nil {
		b.Fatal(err)
	}
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
				x, err := engine.NewExecutor(pr, f.params, f.keys)
				if err != nil {
					b.Fatal(err)
				}
				x.OnDevice, x.Constants = allOnDevice, f.prov
				if tc.hoisted {
					x.Diagonals = f.prov
				}
				if _, err := x.Run(p, map[string][]engine.Value{"x": {{Ct: ct}}}, stored); err != nil {
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
