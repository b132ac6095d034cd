package linear

import (
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
)

// BenchmarkPaperLayer runs the ResNet-18 layer of the paper (Co = Ci = 256,
// 14×14, 3×3, N = 8192, ℓ = 21, 8-bit weights) end to end in-process and
// reports client, server-offline (weight encoding) and server-online
// seconds and the bytes each way:
//
//	go test -run XXX -bench PaperLayer -benchtime 1x ./hempc/linear
func BenchmarkPaperLayer(b *testing.B) {
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		b.Fatal(err)
	}
	s := ConvShape{Ci: 256, H: 14, W: 14, Co: 256, Kh: 3, Kw: 3, Stride: 1, Pad: 1}
	opt := Options{LogT: 21, WeightBits: 8}
	cli := NewClient(p)
	x := randVec(b, s.InputLen(), 21)
	xs := randVec(b, s.InputLen(), 21)
	w := randWeights(b, s.WeightLen(), 8, 21)
	for _, proto := range Protocols {
		b.Run(proto.String(), func(b *testing.B) {
			pl, err := NewPlan(proto, p, s, opt)
			if err != nil {
				b.Fatal(err)
			}
			gks, err := cli.GaloisKeys(pl)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				in, err := pl.EncryptInput(cli, x)
				if err != nil {
					b.Fatal(err)
				}
				ev := cheetah.NewEvaluator(p, cli.Keys.PK, gks)
				t1 := time.Now()
				ws, err := pl.PrepareWeights(ev, w)
				if err != nil {
					b.Fatal(err)
				}
				tp := time.Now()
				out, _, err := pl.EvaluatePrepared(ev, ws, nil, xs, in)
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := pl.DecryptOutput(cli, out); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				b.ReportMetric(t1.Sub(t0).Seconds(), "enc-s")
				b.ReportMetric(tp.Sub(t1).Seconds(), "offline-s")
				b.ReportMetric(t2.Sub(tp).Seconds(), "server-s")
				b.ReportMetric(t3.Sub(t2).Seconds(), "dec-s")
			}
			b.ReportMetric(float64(pl.Counters.BytesC2S), "B-c2s")
			b.ReportMetric(float64(pl.Counters.BytesS2C), "B-s2c")
			b.ReportMetric(float64(pl.Counters.OutputCts), "out-cts")
			b.ReportMetric(float64(pl.Counters.Automorphisms), "autos")
		})
	}
}
