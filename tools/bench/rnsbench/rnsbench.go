// Package rnsbench measures the rns kernels against Lattigo v6 in the same
// run. It is separate from rns so that rns itself never depends on Lattigo.
package rnsbench

import (
	"fmt"
	"runtime"

	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
	"github.com/rosemary-fhe/rosemary/internal/timing"
)

// KernelResult is one line of the kernel comparison: the median time of one
// call of our kernel and of Lattigo v6's equivalent on the same inputs, one
// limb of 2^LogN coefficients modulo a QBits-bit prime, single goroutine.
type KernelResult struct {
	Kernel    string  `json:"kernel"`
	LogN      int     `json:"logN"`
	QBits     int     `json:"q_bits"`
	Path      string  `json:"path"` // which implementation of ours ran: avx512-ifma, avx512 or purego
	OursNs    float64 `json:"ours_ns"`
	LattigoNs float64 `json:"lattigo_ns"`
	Speedup   float64 `json:"speedup"` // LattigoNs / OursNs
}

// BenchKernels measures ntt, intt, mulmod (Montgomery), mac, add,
// automorphism and bconv (4 limbs to 8) at 2^logN coefficients, with primes
// just below 2^49 (the IFMA paths when the CPU has them) and below 2^60 (Go
// paths only). Each figure is the median of iters timed calls after one
// warm-up call; the calls run on one locked OS thread.
func BenchKernels(logN, iters int) ([]KernelResult, error) {
	if logN < 4 || logN > 17 {
		return nil, fmt.Errorf("rns: kernel benchmark logN %d outside [4, 17]", logN)
	}
	if iters < 1 {
		return nil, fmt.Errorf("rns: kernel benchmark needs at least one iteration, got %d", iters)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var res []KernelResult
	for _, bits := range []int{49, 60} {
		r, err := benchShape(logN, bits, iters)
		if err != nil {
			return nil, err
		}
		res = append(res, r...)
	}
	return res, nil
}

// medianNs times f iters times after a warm-up call and returns the median
// wall time of one call.
func medianNs(iters int, f func()) float64 {
	call := func() error { f(); return nil }
	_ = call()
	ts := make([]float64, iters)
	for i := range ts {
		s, _ := timing.Batch(1, call)
		ts[i] = float64(s.Wall.Nanoseconds())
	}
	return timing.Median(ts)
}

func benchShape(logN, bits, iters int) ([]KernelResult, error) {
	ks, err := Kernels(logN, bits)
	if err != nil {
		return nil, err
	}
	res := make([]KernelResult, 0, len(ks))
	for _, c := range ks {
		o := medianNs(iters, c.Ours)
		l := medianNs(iters, c.Lattigo)
		res = append(res, KernelResult{Kernel: c.Name, LogN: logN, QBits: bits, Path: rns.KernelPath(c.Name, bits),
			OursNs: o, LattigoNs: l, Speedup: l / o})
	}
	return res, nil
}

// Kernel is one compared kernel: ours and Lattigo v6's equivalent, each a
// call on the same prepared inputs (one limb of 2^logN coefficients; bconv
// converts 4 limbs to 8).
type Kernel struct {
	Name          string
	Ours, Lattigo func()
}

// Kernels prepares the compared kernels at 2^logN coefficients with primes
// below 2^bits, in the order BenchKernels reports them. The testing.B
// benchmarks of this package time them one by one.
func Kernels(logN, bits int) ([]Kernel, error) {
	const k, m = 4, 8
	N := 1 << logN
	primes, err := rns.NTTPrimesBelow(bits, logN, k+m)
	if err != nil {
		return nil, err
	}
	q := primes[0]
	tab, err := rns.NewNTTTable(N, q)
	if err != nil {
		return nil, err
	}
	mod, err := rns.NewModulus(q)
	if err != nil {
		return nil, err
	}
	r, err := ring.NewRing(N, []uint64{q})
	if err != nil {
		return nil, fmt.Errorf("rns: lattigo ring: %w", err)
	}
	s := r.SubRings[0]
	// Deterministic pseudo-random inputs (the timing does not depend on them).
	fill := func(v []uint64, bound uint64, seed uint64) {
		x := seed | 1
		for i := range v {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[i] = x % bound
		}
	}
	a, b, out, acc := make([]uint64, N), make([]uint64, N), make([]uint64, N), make([]uint64, N)
	fill(a, q, 1)
	fill(b, q, 2)
	fill(acc, q, 3)

	gal := rns.GaloisElementForRotation(N, 5)
	idx, err := rns.AutomorphismNTTIndex(N, gal)
	if err != nil {
		return nil, err
	}
	lidx, err := ring.AutomorphismNTTIndex(N, r.NthRoot(), gal)
	if err != nil {
		return nil, fmt.Errorf("rns: lattigo automorphism index: %w", err)
	}
	pin, pout := r.NewPoly(), r.NewPoly()
	copy(pin.Coeffs[0], a)

	// Base conversion from k limbs to m limbs.
	Q, P := primes[:k], primes[k:]
	rQ, err := ring.NewRing(N, Q)
	if err != nil {
		return nil, fmt.Errorf("rns: lattigo ring: %w", err)
	}
	rP, err := ring.NewRing(N, P)
	if err != nil {
		return nil, fmt.Errorf("rns: lattigo ring: %w", err)
	}
	from, to := make([]rns.Modulus, k), make([]rns.Modulus, m)
	for i := range Q {
		if from[i], err = rns.NewModulus(Q[i]); err != nil {
			return nil, err
		}
	}
	for j := range P {
		if to[j], err = rns.NewModulus(P[j]); err != nil {
			return nil, err
		}
	}
	bc, err := rns.NewBConv(from, to)
	if err != nil {
		return nil, err
	}
	bin, bout := rQ.NewPoly(), rP.NewPoly()
	for i := range Q {
		fill(bin.Coeffs[i], Q[i], uint64(10+i))
	}
	scratch := make([]uint64, k*N)
	muc := ring.GenModUpConstants(Q, P)

	return []Kernel{
		{"ntt", func() { tab.Forward(a, out) }, func() { s.NTT(a, out) }},
		{"intt", func() { tab.Backward(a, out) }, func() { s.INTT(a, out) }},
		{"mulmod", func() { rns.MulMont(a, b, out, &mod) }, func() { s.MulCoeffsMontgomery(a, b, out) }},
		{"mac", func() { rns.MACMont(a, b, acc, &mod) }, func() { s.MulCoeffsMontgomeryThenAdd(a, b, acc) }},
		{"add", func() { rns.Add(a, b, out, q) }, func() { s.Add(a, b, out) }},
		{"automorphism", func() { rns.Permute(pin.Coeffs[0], pout.Coeffs[0], idx) }, func() { r.AutomorphismNTTWithIndex(pin, lidx, pout) }},
		{"bconv", func() { bc.Convert(bin.Coeffs, bout.Coeffs, scratch) }, func() { ring.ModUpExact(bin.Coeffs, bout.Coeffs, rQ, rP, muc) }},
	}, nil
}
