package cheetah

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"

	"crypto/sha3"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// DefaultFloodLambda is the statistical security parameter of noise
// flooding: the flooding noise is 2^λ times the bound of the noise it hides.
const DefaultFloodLambda = 40

// FloodBits returns F such that flooding with U[-2^F, 2^F] hides noise of
// bound b with statistical distance ≤ 2^-λ per coefficient.
func FloodBits(b Bound, lambda int) int {
	return int(math.Ceil(b.Log2())) + lambda
}

// RerandomizedBound is the noise bound after Rerandomize, or an error if the
// flooding does not fit the budget at the ciphertext's level.
func (p Parameters) RerandomizedBound(b Bound, level, logT, lambda int) (Bound, int, error) {
	if lambda < 0 {
		return 0, 0, fmt.Errorf("cheetah: negative flooding parameter %d", lambda)
	}
	pre := b + p.FreshPK()
	F := FloodBits(pre, lambda)
	post := pre + Bound(math.Exp2(float64(F)))
	if F+1 > 126 || post >= p.Budget(level, logT) {
		return 0, 0, fmt.Errorf("cheetah: flooding 2^%d (λ=%d over noise 2^%.1f) exceeds the budget 2^%.1f at level %d for t=2^%d",
			F, lambda, pre.Log2(), p.Budget(level, logT).Log2(), level, logT)
	}
	return post, F, nil
}

// Rerandomize adds a fresh public-key encryption of zero (so c1 is
// independent of what the server computed) and flooding noise
// U[-2^F, 2^F] to c0 (so the weight-dependent noise is statistically
// hidden), with F = ⌈log2(bound)⌉ + λ.
func (ev *Evaluator) Rerandomize(ct *Ciphertext, lambda int) error {
	if ev.pk == nil {
		return fmt.Errorf("cheetah: rerandomize: no public key")
	}
	level := ct.Level()
	post, F, err := ev.p.RerandomizedBound(ct.Noise, level, ct.LogT, lambda)
	if err != nil {
		return err
	}
	zero := rlwe.NewCiphertext(ev.p.rlwe, 1, level)
	if err := rlwe.NewEncryptor(ev.p.rlwe, ev.pk).EncryptZero(zero); err != nil {
		return fmt.Errorf("cheetah: encrypt zero: %w", err)
	}
	rq := ev.p.RingQ().AtLevel(level)
	rq.Add(ct.Ct.Value[0], zero.Value[0], ct.Ct.Value[0])
	rq.Add(ct.Ct.Value[1], zero.Value[1], ct.Ct.Value[1])
	flood := rq.NewPoly()
	if err := sampleFlood(rq, F, flood); err != nil {
		return err
	}
	rq.NTT(flood, flood)
	rq.Add(ct.Ct.Value[0], flood, ct.Ct.Value[0])
	ct.Noise = post
	return nil
}

// sampleFlood writes coefficients uniform in [-2^F, 2^F) (coefficient
// domain), from a SHAKE256 stream keyed by crypto/rand. Constant time:
// fixed-width masking and Barrett reductions, no rejection.
func sampleFlood(rq *ring.Ring, F int, pol ring.Poly) error {
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return fmt.Errorf("cheetah: flood seed: %w", err)
	}
	xof := sha3.NewSHAKE256()
	_, _ = xof.Write(seed[:])
	nbits := F + 1
	loMask, hiMask := ^uint64(0), uint64(0)
	if nbits < 64 {
		loMask = uint64(1)<<uint(nbits) - 1
	} else {
		hiMask = uint64(1)<<uint(nbits-64) - 1
	}
	N := rq.N()
	buf := make([]byte, 16*N)
	_, _ = xof.Read(buf)
	for i, s := range rq.SubRings[:rq.Level()+1] {
		q := s.Modulus
		brc := s.BRedConstant
		two64 := ring.BRedAdd(^uint64(0), q, brc) + 1 // 2^64 mod q (< q since 2^64-1 mod q < q-1 w.h.p.)
		two64 = ring.CRed(two64, q)
		// 2^F mod q
		var offHi, offLo uint64
		if F < 64 {
			offLo = uint64(1) << uint(F)
		} else {
			offHi = uint64(1) << uint(F-64)
		}
		off := ring.CRed(ring.BRed(ring.BRedAdd(offHi, q, brc), two64, q, brc)+ring.BRedAdd(offLo, q, brc), q)
		c := pol.Coeffs[i]
		for j := 0; j < N; j++ {
			lo := binary.LittleEndian.Uint64(buf[16*j:]) & loMask
			hi := binary.LittleEndian.Uint64(buf[16*j+8:]) & hiMask
			v := ring.CRed(ring.BRed(ring.BRedAdd(hi, q, brc), two64, q, brc)+ring.BRedAdd(lo, q, brc), q)
			c[j] = ring.CRed(v+q-off, q)
		}
	}
	return nil
}
