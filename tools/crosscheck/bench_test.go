package crosscheck

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// BenchmarkOps compares whole operations at logN=16 with 23 levels and
// primes below 2^50 (preset ckks-16): the interpreter running the lowered
// mProgram against Lattigo's evaluator, in the same run.
//
//	go test ./tools/crosscheck -run XXX -bench Ops -benchtime 5x
func BenchmarkOps(b *testing.B) {
	env, err := NewEnv("ckks-16")
	if err != nil {
		b.Fatal(err)
	}
	for _, op := range []ir.Op{"HMult+Relinearize", ir.OpHRot} {
		r, err := env.NewRunner(op)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(op)+"/ours", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := r.Ours(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(op)+"/lattigo", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := r.Lattigo(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
