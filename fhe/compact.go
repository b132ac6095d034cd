package fhe

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// CompactBGV returns the compact form of a BGV plaintext encoded by
// Lattigo: its N coefficients modulo the plaintext modulus t, one limb
// instead of level+1. Lattigo stores m as NTT(m·t⁻¹ mod q_i) (optionally in
// Montgomery form); m < t < q_0, so limb 0 alone gives m back exactly.
// Stored databases keep this form and are lifted where they are used
// (lower.OpPMultCompact on the device, LiftCompactBGV on the host).
func CompactBGV(params bgv.Parameters, pt *rlwe.Plaintext) ([]uint64, error) {
	if pt == nil || pt.Value.N() != params.N() || pt.Level() < 0 {
		return nil, fmt.Errorf("fhe: compact: plaintext does not match the parameters")
	}
	r := params.RingQ().AtLevel(0)
	p := r.NewPoly()
	copy(p.Coeffs[0], pt.Value.Coeffs[0])
	if pt.IsMontgomery {
		r.IMForm(p, p)
	}
	if pt.IsNTT {
		r.INTT(p, p)
	}
	t := params.PlaintextModulus()
	r.MulScalar(p, t, p)
	out := make([]uint64, len(p.Coeffs[0]))
	for i, v := range p.Coeffs[0] {
		if v >= t {
			return nil, fmt.Errorf("fhe: compact: coefficient %d is %d, not below t = %d (not a BGV plaintext of these parameters)", i, v, t)
		}
		out[i] = v
	}
	return out, nil
}

// LiftCompactBGV writes into pt (whose level and NTT/Montgomery flags are
// kept) the plaintext whose compact form is m: Lattigo's own encoding of
// the coefficient vector m, so CompactBGV(LiftCompactBGV(m)) = m and the
// lifted plaintext equals the one m was taken from.
func LiftCompactBGV(params bgv.Parameters, m []uint64, pt *rlwe.Plaintext) error {
	return LiftCompactBGVWith(params, bgv.NewEncoder(params), m, pt)
}

// LiftCompactBGVWith is LiftCompactBGV with the caller's encoder (an
// encoder is costly to build and not safe for concurrent use: one per
// goroutine).
func LiftCompactBGVWith(params bgv.Parameters, ecd *bgv.Encoder, m []uint64, pt *rlwe.Plaintext) error {
	if len(m) != params.N() {
		return fmt.Errorf("fhe: lift: %d coefficients, want %d", len(m), params.N())
	}
	t := params.PlaintextModulus()
	for i, v := range m {
		if v >= t {
			return fmt.Errorf("fhe: lift: coefficient %d is %d, not below t = %d", i, v, t)
		}
	}
	batched, scale := pt.IsBatched, pt.Scale
	pt.IsBatched = false
	pt.Scale = rlwe.NewScale(1)
	err := ecd.Encode(m, pt)
	pt.IsBatched, pt.Scale = batched, scale
	if err != nil {
		return fmt.Errorf("fhe: lift: %w", err)
	}
	return nil
}
