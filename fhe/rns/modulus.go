package rns

import (
	"fmt"
	"math/big"
	"math/bits"
)

// Modulus holds one RNS prime and the constants its reductions need.
// Montgomery constants use R = 2^64, as Lattigo does.
type Modulus struct {
	Q         uint64
	MRedConst uint64    // q^{-1} mod 2^64 (Lattigo's MRedConstant)
	BRedConst [2]uint64 // floor(2^128 / q) as {hi, lo}
	RModQ     uint64    // 2^64 mod q (Montgomery form of 1)
	R2        uint64    // 2^128 mod q
}

// NewModulus precomputes the constants of q. q must be odd and below 2^62 so
// that lazy values in [0, 4q) fit a word.
func NewModulus(q uint64) (Modulus, error) {
	if q < 3 || q&1 == 0 || q >= 1<<62 {
		return Modulus{}, fmt.Errorf("rns: modulus %d must be odd, ≥ 3 and < 2^62", q)
	}
	m := Modulus{Q: q}
	m.MRedConst = mredConstant(q)
	r := new(big.Int).Lsh(big.NewInt(1), 128)
	r.Quo(r, new(big.Int).SetUint64(q))
	m.BRedConst = [2]uint64{new(big.Int).Rsh(r, 64).Uint64(), r.Uint64()}
	_, m.RModQ = bits.Div64(1, 0, q)
	_, m.R2 = bits.Div64(m.RModQ, 0, q)
	return m, nil
}

// mredConstant returns q^{-1} mod 2^64 computed by Newton iteration.
func mredConstant(q uint64) uint64 {
	x := q // correct to 3 bits for odd q
	for i := 0; i < 5; i++ {
		x *= 2 - q*x
	}
	return x
}

// MRed returns x·y·2^{-64} mod q in [0, q) (Montgomery multiplication).
func (m *Modulus) MRed(x, y uint64) uint64 {
	r := m.MRedLazy(x, y)
	if r >= m.Q {
		r -= m.Q
	}
	return r
}

// MRedLazy returns x·y·2^{-64} mod q in [0, 2q).
func (m *Modulus) MRedLazy(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	h, _ := bits.Mul64(lo*m.MRedConst, m.Q)
	return hi - h + m.Q
}

// MForm returns x·2^64 mod q (into Montgomery form).
func (m *Modulus) MForm(x uint64) uint64 { return m.MRed(x, m.R2) }

// IMForm returns x·2^{-64} mod q (out of Montgomery form).
func (m *Modulus) IMForm(x uint64) uint64 { return m.MRed(x, 1) }

// Reduce returns x mod q for any 64-bit x (Barrett).
func (m *Modulus) Reduce(x uint64) uint64 {
	hi, _ := bits.Mul64(x, m.BRedConst[0])
	r := x - hi*m.Q
	if r >= m.Q {
		r -= m.Q
	}
	return r
}

// BRed returns x·y mod q in [0, q) (Barrett reduction of the 128-bit product).
func (m *Modulus) BRed(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	_, r := bits.Div64(hi%m.Q, lo, m.Q)
	return r
}

// ShoupConstant returns floor(w·2^64/q) for w < q, used by MulShoup.
func (m *Modulus) ShoupConstant(w uint64) uint64 {
	s, _ := bits.Div64(w, 0, m.Q)
	return s
}

// MulShoupLazy returns x·w mod q in [0, 2q) given ws = ShoupConstant(w).
func MulShoupLazy(x, w, ws, q uint64) uint64 {
	hi, _ := bits.Mul64(x, ws)
	return x*w - hi*q
}

// ModExp returns x^e mod q.
func ModExp(x, e, q uint64) uint64 {
	r := uint64(1)
	x %= q
	for e > 0 {
		if e&1 == 1 {
			r = mulMod(r, x, q)
		}
		x = mulMod(x, x, q)
		e >>= 1
	}
	return r
}

func mulMod(a, b, q uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi%q, lo, q)
	return r
}
