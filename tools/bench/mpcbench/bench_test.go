package mpcbench

import (
	"testing"

	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/infer"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/nets"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

func params13(t testing.TB) cheetah.Parameters {
	t.Helper()
	p, err := cheetah.NewParameters(cheetah.PN13)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConvModBruteForce(t *testing.T) {
	// 1 input channel 3×3, one 2×2 kernel of ones, stride 1, pad 0:
	// each output is the sum of a 2×2 window.
	s := linear.ConvShape{Ci: 1, H: 3, W: 3, Co: 1, Kh: 2, Kw: 2, Stride: 1}
	x := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	got := ConvMod(s, []uint64{1, 1, 1, 1}, x, 8)
	want := []uint64{12, 16, 24, 28}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	// Wrap-around mod 2^4 and a negative weight (−1 = 15 mod 16).
	got = ConvMod(linear.ConvShape{Ci: 1, H: 1, W: 2, Co: 1, Kh: 1, Kw: 2, Stride: 1}, []uint64{15, 3}, []uint64{5, 7}, 4)
	if got[0] != (16-5+21)%16 {
		t.Fatalf("got %d", got[0])
	}
}

// TestMeasureLayer runs small layers for real under every protocol; the
// measurement itself checks the result against ConvMod.
func TestMeasureLayer(t *testing.T) {
	p := params13(t)
	s := linear.ConvShape{Ci: 8, H: 6, W: 6, Co: 4, Kh: 3, Kw: 3, Stride: 2, Pad: 1}
	opt := linear.Options{LogT: 21, WeightBits: 8}
	var rows []Row
	for _, proto := range linear.Protocols {
		r, err := MeasureLayer("test", "small", proto, p, s, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Verified || r.Kind != Measured || r.Flights != 2 || r.CPUS <= 0 || !(r.WANS > r.LANS && r.LANS >= r.CPUS) {
			t.Errorf("%v: row %+v", proto, r)
		}
		pl, err := linear.NewPlan(proto, p, s, opt)
		if err != nil {
			t.Fatal(err)
		}
		// Bytes as sent: the plan's payload plus framing.
		if r.BytesC2S < pl.Counters.BytesC2S || r.BytesC2S > pl.Counters.BytesC2S+1024 ||
			r.BytesS2C < pl.Counters.BytesS2C || r.BytesS2C > pl.Counters.BytesS2C+1024 {
			t.Errorf("%v: measured %d/%d bytes, plan %d/%d", proto, r.BytesC2S, r.BytesS2C, pl.Counters.BytesC2S, pl.Counters.BytesS2C)
		}
		rows = append(rows, r)
	}
	if !(rows[1].OutputCts < rows[0].OutputCts && rows[1].BytesS2C < rows[0].BytesS2C) {
		t.Errorf("optiencode does not send fewer outputs than cheetah: %+v vs %+v", rows[1], rows[0])
	}
}

func TestProjectNetwork(t *testing.T) {
	p := params13(t)
	u := Units{LogN: 13, EncS: 1e-3, MulS: 1e-4, AutoS: 2e-3, OutS: 3e-3}
	n := nets.ResNet18()
	for _, proto := range linear.Protocols {
		rows, err := ProjectNetwork(n, proto, p, nets.PaperOptions, u)
		if err != nil {
			t.Fatal(err)
		}
		tot := rows[len(rows)-1]
		want, _, err := nets.Count(n, proto, p, nets.PaperOptions)
		if err != nil {
			t.Fatal(err)
		}
		if tot.Layer != "total" || tot.OutputCts != want.OutputCts || tot.Automorphisms != want.Automorphisms ||
			tot.BytesC2S != want.BytesC2S || tot.BytesS2C != want.BytesS2C || tot.CPMults != want.CPMults {
			t.Errorf("%v: total %+v, nets.Count %+v", proto, tot, want)
		}
		wantCPU := u.Compute(want).Seconds()
		if d := tot.CPUS - wantCPU; d > 1e-6 || d < -1e-6 {
			t.Errorf("%v: cpu %.6f, want %.6f", proto, tot.CPUS, wantCPU)
		}
		// Link model: WAN adds 20 ms per flight plus bytes at 50 MB/s.
		wan := tot.CPUS + float64(tot.Flights)*0.02 + float64(tot.BytesC2S+tot.BytesS2C)/50e6
		if d := tot.WANS - wan; d > 1e-6 || d < -1e-6 {
			t.Errorf("%v: WAN %.6f, want %.6f", proto, tot.WANS, wan)
		}
	}
}

func TestMNISTRows(t *testing.T) {
	st := infer.Stats{Protocol: "cheetah", LogN: 13, Images: 2, Layers: []infer.LayerStats{
		{Layer: "conv1", Plan: linear.Counters{OutputCts: 8, InputCts: 1, CPMults: 8}, Linear: transport.Stats{BytesC2S: 200, BytesS2C: 800, Flights: 4}, Nonlinear: transport.Stats{BytesC2S: 100, BytesS2C: 60, Flights: 20}, LinearS: 0.2, NonlinS: 0.4},
		{Layer: "fc2", Plan: linear.Counters{OutputCts: 1, InputCts: 1, CPMults: 1}, Linear: transport.Stats{BytesC2S: 20, BytesS2C: 40, Flights: 4}, Nonlinear: transport.Stats{BytesS2C: 8, Flights: 2}, LinearS: 0.02, NonlinS: 0.002},
	}}
	rows := MNISTRows(st)
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	tot := rows[4]
	if rows[0].BytesS2C != 400 || rows[1].Layer != "conv1/trunc+relu" || rows[3].Layer != "fc2/reveal" ||
		tot.BytesC2S != 160 || tot.BytesS2C != 454 || tot.Flights != 15 || tot.OutputCts != 9 {
		t.Errorf("rows %+v", rows)
	}
	if d := tot.CPUS - 0.311; d > 1e-9 || d < -1e-9 {
		t.Errorf("total cpu %.6f", tot.CPUS)
	}
}

func TestMeasureUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	u, err := MeasureUnits(params13(t), 26, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !(u.EncS > 0 && u.MulS > 0 && u.AutoS > 0 && u.OutS > 0) {
		t.Errorf("units %+v", u)
	}
}

// BenchmarkPaperLayer runs the ResNet-18 paper layer (N = 8192) under each
// protocol.
func BenchmarkPaperLayer(b *testing.B) {
	p := params13(b)
	l := nets.PaperLayer()
	for _, proto := range linear.Protocols {
		b.Run(proto.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := MeasureLayer("resnet18", l.Name, proto, p, l.Shape, nets.PaperOptions, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.CPUS, "cpu_s")
				b.ReportMetric(float64(r.BytesS2C), "bytes_s2c")
			}
		})
	}
}
