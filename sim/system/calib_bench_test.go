package system

import (
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// BenchmarkCPUCalibration times the rns kernels the CPU baseline is
// calibrated from (cpu.go): one limb of 2^13 coefficients, one goroutine,
// for primes just below 2^49 (the IFMA paths) and 2^60 (AVX-512 / Go).
// BConv converts 4 limbs to 8 (32 limb pairs). Run it with
//
//	go test ./sim/system -run XXX -bench CPUCalibration -benchtime 2000x -cpu 1
//
// and copy ns/op into cpu.go (BConv: ns/op / 32 per pair).
func BenchmarkCPUCalibration(b *testing.B) {
	const logN = 13
	n := 1 << logN
	for _, bits := range []int{49, 60} {
		primes := nttPrimes(b, bits, logN, 12)
		q := primes[0]
		tab, err := rns.NewNTTTable(n, q)
		if err != nil {
			b.Fatal(err)
		}
		mod, err := rns.NewModulus(q)
		if err != nil {
			b.Fatal(err)
		}
		x, y, out, acc := make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n)
		for i := range x {
			x[i], y[i], acc[i] = uint64(i*7919)%q, uint64(i*104729+1)%q, uint64(i)%q
		}
		idx, err := rns.AutomorphismNTTIndex(n, rns.GaloisElementForRotation(n, 5))
		if err != nil {
			b.Fatal(err)
		}
		from, to := make([]rns.Modulus, 4), make([]rns.Modulus, 8)
		for i := range from {
			if from[i], err = rns.NewModulus(primes[i]); err != nil {
				b.Fatal(err)
			}
		}
		for j := range to {
			if to[j], err = rns.NewModulus(primes[4+j]); err != nil {
				b.Fatal(err)
			}
		}
		bc, err := rns.NewBConv(from, to)
		if err != nil {
			b.Fatal(err)
		}
		in, outs := make([][]uint64, 4), make([][]uint64, 8)
		for i := range in {
			in[i] = make([]uint64, n)
			for c := range in[i] {
				in[i][c] = uint64(c*31+i) % primes[i]
			}
		}
		for j := range outs {
			outs[j] = make([]uint64, n)
		}
		scratch := make([]uint64, 4*n)
		for _, k := range []struct {
			name string
			f    func()
		}{
			{"ntt", func() { tab.Forward(x, out) }},
			{"intt", func() { tab.Backward(x, out) }},
			{"mulmod", func() { rns.MulMont(x, y, out, &mod) }},
			{"mac", func() { rns.MACMont(x, y, acc, &mod) }},
			{"add", func() { rns.Add(x, y, out, q) }},
			{"automorphism", func() { rns.Permute(x, out, idx) }},
			{"bconv4x8", func() { bc.Convert(in, outs, scratch) }},
		} {
			b.Run(fmt.Sprintf("%s/q%d", k.name, bits), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					k.f()
				}
			})
		}
	}
}

// nttPrimes returns count primes = 1 mod 2^(logN+1), the largest below 2^bits.
func nttPrimes(tb testing.TB, bits, logN, count int) []uint64 {
	tb.Helper()
	ps, err := rns.NTTPrimesBelow(bits, logN, count)
	if err != nil {
		tb.Fatal(err)
	}
	return ps
}
