package cheetah

import (
	"fmt"
	"math/big"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// scaling holds the constants of round(q·m/t) at one level: q = Δ·t + r.
type scaling struct {
	deltaModQi []uint64 // floor(q/t) mod q_i
	r          uint64   // q mod t (< t ≤ 2^45)
}

func (p Parameters) scaling(level, logT int) scaling {
	q := p.qAtLevel(level)
	t := new(big.Int).Lsh(big.NewInt(1), uint(logT))
	delta, r := new(big.Int).QuoRem(q, t, new(big.Int))
	s := scaling{r: r.Uint64(), deltaModQi: make([]uint64, level+1)}
	for i, qi := range p.rlwe.Q()[:level+1] {
		s.deltaModQi[i] = new(big.Int).Mod(delta, new(big.Int).SetUint64(qi)).Uint64()
	}
	return s
}

// encodeScaled writes round(q·m/t) (coefficient domain) into pol at level.
// Coefficients of m must be < 2^logT (checked).
func (p Parameters) encodeScaled(m []uint64, level, logT int, pol ring.Poly) error {
	if err := checkLogT(logT); err != nil {
		return err
	}
	N := p.N()
	if len(m) > N {
		return fmt.Errorf("cheetah: %d coefficients exceed N=%d", len(m), N)
	}
	mask := uint64(1)<<uint(logT) - 1
	for _, v := range m {
		if v > mask {
			return fmt.Errorf("cheetah: coefficient %d not below 2^%d", v, logT)
		}
	}
	sc := p.scaling(level, logT)
	rq := p.RingQ().AtLevel(level)
	half := uint64(1) << uint(logT-1)
	for i, s := range rq.SubRings[:level+1] {
		qi := s.Modulus
		brc := s.BRedConstant
		d := sc.deltaModQi[i]
		c := pol.Coeffs[i]
		for j := 0; j < N; j++ {
			var mj uint64
			if j < len(m) {
				mj = m[j]
			}
			// round(r·m/t) = (r·m + t/2) >> logT, r·m < 2^90.
			hi, lo := bits.Mul64(sc.r, mj)
			lo, carry := bits.Add64(lo, half, 0)
			hi += carry
			rr := (hi << uint(64-logT)) | (lo >> uint(logT))
			c[j] = ring.CRed(ring.BRed(d, mj, qi, brc)+rr, qi)
		}
	}
	return nil
}

// decodeScaled computes round(t·v/q) mod t for v in coefficient domain.
func (p Parameters) decodeScaled(pol ring.Poly, level, logT int) []uint64 {
	N := p.N()
	out := make([]uint64, N)
	mask := uint64(1)<<uint(logT) - 1
	if level == 0 {
		q0 := p.rlwe.Q()[0]
		half := q0 >> 1
		for j, v := range pol.Coeffs[0][:N] {
			// (v·2^logT + q0/2) / q0 with v < q0 < 2^61.
			hi, lo := v>>uint(64-logT), v<<uint(logT)
			lo, c := bits.Add64(lo, half, 0)
			hi += c
			quo, _ := bits.Div64(hi, lo, q0)
			out[j] = quo & mask
		}
		return out
	}
	rq := p.RingQ().AtLevel(level)
	coeffs := make([]*big.Int, N)
	for i := range coeffs {
		coeffs[i] = new(big.Int)
	}
	rq.PolyToBigint(pol, 1, coeffs)
	q := p.qAtLevel(level)
	halfQ := new(big.Int).Rsh(q, 1)
	tmp := new(big.Int)
	for j, v := range coeffs {
		tmp.Lsh(v, uint(logT))
		tmp.Add(tmp, halfQ)
		tmp.Quo(tmp, q)
		out[j] = tmp.Uint64() & mask
	}
	return out
}

// liftCentered writes the centered lift of w (mod 2^logT) into pol at level,
// in coefficient domain: values ≥ t/2 become negative.
func (p Parameters) liftCentered(w []uint64, level, logT int, pol ring.Poly) error {
	if err := checkLogT(logT); err != nil {
		return err
	}
	N := p.N()
	if len(w) > N {
		return fmt.Errorf("cheetah: %d coefficients exceed N=%d", len(w), N)
	}
	t := uint64(1) << uint(logT)
	for i, s := range p.RingQ().SubRings[:level+1] {
		qi := s.Modulus
		c := pol.Coeffs[i]
		for j := 0; j < N; j++ {
			var v uint64
			if j < len(w) {
				v = w[j] & (t - 1)
			}
			if v >= t/2 {
				c[j] = qi - (t - v)
			} else {
				c[j] = v
			}
		}
	}
	return nil
}
