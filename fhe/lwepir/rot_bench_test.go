package lwepir

import (
	"testing"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

func BenchmarkRotateDefault(b *testing.B) {
	p := Default()
	bp, _ := p.hintParams()
	sk, evk, _ := GenerateKeys(p)
	shape := Shape{Rows: p.HintSlots(), Cols: p.N(), RecordSize: 256}
	var seed [SeedSize]byte
	cl, _ := NewClient(p, shape, seed, sk)
	x, _ := cl.encryptSecret(make([]int64, p.N()))
	eval := bgv.NewEvaluator(bp, evk.set())
	out := bgv.NewCiphertext(bp, 1, x.Level())
	b.Run("rotate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			eval.RotateColumns(x, 1, out)
		}
	})
	b.Run("mulacc64", func(b *testing.B) {
		rq := bp.RingQ()
		for i := 0; i < b.N; i++ {
			for j := 0; j < 64; j++ {
				rq.MulCoeffsMontgomeryThenAdd(x.Value[0], x.Value[1], out.Value[0])
				rq.MulCoeffsMontgomeryThenAdd(x.Value[0], x.Value[1], out.Value[1])
			}
		}
	})
}
