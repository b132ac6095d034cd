package rns

import (
	"fmt"
	"testing"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// Kernel benchmarks, ours against Lattigo v6 in the same run, single limb,
// single goroutine. Run with
//
//	go test -run '^$' -bench . ./rns
//
// The 49-bit prime takes the IFMA paths; the 60-bit prime only the Go ones.

var benchShapes = []struct{ logN, bits int }{{16, 49}, {16, 60}}

func benchName(logN, bits int, who string) string {
	return fmt.Sprintf("logN=%d/q%d/%s", logN, bits, who)
}

func BenchmarkNTT(b *testing.B) {
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		qs := testPrimes(b, sh.logN, sh.bits, 1)
		tab, err := NewNTTTable(N, qs[0])
		if err != nil {
			b.Fatal(err)
		}
		r, err := ring.NewRing(N, qs)
		if err != nil {
			b.Fatal(err)
		}
		a := randLimb(b, N, qs[0])
		out := make([]uint64, N)
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				tab.Forward(a, out)
			}
		})
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			s := r.SubRings[0]
			for b.Loop() {
				s.NTT(a, out)
			}
		})
	}
}

func BenchmarkINTT(b *testing.B) {
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		qs := testPrimes(b, sh.logN, sh.bits, 1)
		tab, err := NewNTTTable(N, qs[0])
		if err != nil {
			b.Fatal(err)
		}
		r, err := ring.NewRing(N, qs)
		if err != nil {
			b.Fatal(err)
		}
		a := randLimb(b, N, qs[0])
		out := make([]uint64, N)
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				tab.Backward(a, out)
			}
		})
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			s := r.SubRings[0]
			for b.Loop() {
				s.INTT(a, out)
			}
		})
	}
}

func BenchmarkMulMont(b *testing.B) {
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		qs := testPrimes(b, sh.logN, sh.bits, 1)
		m, _ := NewModulus(qs[0])
		r, err := ring.NewRing(N, qs)
		if err != nil {
			b.Fatal(err)
		}
		x, y := randLimb(b, N, qs[0]), randLimb(b, N, qs[0])
		out := make([]uint64, N)
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				MulMont(x, y, out, &m)
			}
		})
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			s := r.SubRings[0]
			for b.Loop() {
				s.MulCoeffsMontgomery(x, y, out)
			}
		})
	}
}

func BenchmarkMACMont(b *testing.B) {
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		qs := testPrimes(b, sh.logN, sh.bits, 1)
		m, _ := NewModulus(qs[0])
		r, err := ring.NewRing(N, qs)
		if err != nil {
			b.Fatal(err)
		}
		x, y := randLimb(b, N, qs[0]), randLimb(b, N, qs[0])
		acc := randLimb(b, N, qs[0])
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				MACMont(x, y, acc, &m)
			}
		})
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			s := r.SubRings[0]
			for b.Loop() {
				s.MulCoeffsMontgomeryThenAdd(x, y, acc)
			}
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		qs := testPrimes(b, sh.logN, sh.bits, 1)
		r, err := ring.NewRing(N, qs)
		if err != nil {
			b.Fatal(err)
		}
		x, y := randLimb(b, N, qs[0]), randLimb(b, N, qs[0])
		out := make([]uint64, N)
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				Add(x, y, out, qs[0])
			}
		})
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			s := r.SubRings[0]
			for b.Loop() {
				s.Add(x, y, out)
			}
		})
	}
}

func BenchmarkAutomorphism(b *testing.B) {
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		qs := testPrimes(b, sh.logN, sh.bits, 1)
		r, err := ring.NewRing(N, qs)
		if err != nil {
			b.Fatal(err)
		}
		gal := GaloisElementForRotation(N, 5)
		idx, err := AutomorphismNTTIndex(N, gal)
		if err != nil {
			b.Fatal(err)
		}
		lidx, err := ring.AutomorphismNTTIndex(N, r.NthRoot(), gal)
		if err != nil {
			b.Fatal(err)
		}
		in := r.NewPoly()
		copy(in.Coeffs[0], randLimb(b, N, qs[0]))
		out := r.NewPoly()
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				Permute(in.Coeffs[0], out.Coeffs[0], idx)
			}
		})
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			for b.Loop() {
				r.AutomorphismNTTWithIndex(in, lidx, out)
			}
		})
	}
}

// BenchmarkBConv converts k = 4 limbs to m = 8 (one ModUp digit onto P and a
// few Q limbs), against Lattigo's ModUpExact on the same inputs.
func BenchmarkBConv(b *testing.B) {
	const k, m = 4, 8
	for _, sh := range benchShapes {
		N := 1 << sh.logN
		all := testPrimes(b, sh.logN, sh.bits, k+m)
		if sh.bits < 50 {
			// Lattigo's generator alternates around 2^bits; keep all below 2^50.
			all = nttPrimes(b, sh.bits, sh.logN, k+m)
		}
		Q, P := all[:k], all[k:]
		rQ, err := ring.NewRing(N, Q)
		if err != nil {
			b.Fatal(err)
		}
		rP, err := ring.NewRing(N, P)
		if err != nil {
			b.Fatal(err)
		}
		bc := newTestBConv(b, Q, P)
		in := rQ.NewPoly()
		for i := range Q {
			copy(in.Coeffs[i], randLimb(b, N, Q[i]))
		}
		out := rP.NewPoly()
		scratch := make([]uint64, k*N)
		b.Run(benchName(sh.logN, sh.bits, "ours"), func(b *testing.B) {
			for b.Loop() {
				bc.Convert(in.Coeffs, out.Coeffs, scratch)
			}
		})
		muc := ring.GenModUpConstants(Q, P)
		b.Run(benchName(sh.logN, sh.bits, "lattigo"), func(b *testing.B) {
			for b.Loop() {
				ring.ModUpExact(in.Coeffs, out.Coeffs, rQ, rP, muc)
			}
		})
	}
}

// BenchmarkMACMontSum is the ring stage's dot product over 64 baby steps
// of 512 slots: the grouped sum against 64 MACMont calls, per product.
func BenchmarkMACMontSum(b *testing.B) {
	const terms, n = 64, 512
	for _, bitsQ := range []int{49, 60} {
		for _, q := range testPrimes(b, 13, bitsQ, 2) {
			m, _ := NewModulus(q)
			as, bs := make([][]uint64, terms), make([][]uint64, terms)
			for k := range as {
				as[k], bs[k] = randLimb(b, n, q), randLimb(b, n, q)
			}
			acc := randLimb(b, n, q)
			name := fmt.Sprintf("q=%d.%02d", bitsQ, q%100)
			b.Run(name+"/sum", func(b *testing.B) {
				for b.Loop() {
					MACMontSum(as, bs, acc, &m)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*terms*n), "ns/MAC")
			})
			b.Run(name+"/mac", func(b *testing.B) {
				for b.Loop() {
					for k := range as {
						MACMont(as[k], bs[k], acc, &m)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*terms*n), "ns/MAC")
			})
		}
	}
}
