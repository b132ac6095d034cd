package rns

import (
	"fmt"
	"math/big"
	"math/bits"
)

// BConv converts limbs from the basis {q_i} to the moduli {p_j} exactly as
// Lattigo's ModUpExact does: y_i = x_i·(Q/q_i)^{-1} mod q_i, the overflow
// count v = ⌊Σ y_i / q_i⌋ estimated in float64 (summed in basis order, which
// this code must keep for bit-compatibility), and
// out_j = Σ y_i·(Q/q_i) − v·Q mod p_j.
type BConv struct {
	From, To []Modulus
	qHatInv  []uint64   // (Q/q_i)^{-1} mod q_i
	qHatModP [][]uint64 // [j][i] = (Q/q_i mod p_j)·2^64 mod p_j (Montgomery form)
	vQModP   [][]uint64 // [j][v] = −v·Q mod p_j, v ∈ [0, len(From)]
	fast     *bconvFast // constants of the assembly kernels
}

// NewBConv precomputes the constants of the conversion from → to.
func NewBConv(from, to []Modulus) (*BConv, error) {
	if len(from) == 0 || len(to) == 0 {
		return nil, fmt.Errorf("rns: base conversion needs non-empty bases")
	}
	if len(from) > 32 {
		// Σ y_i·w_i must fit 128 bits with room for the Montgomery step.
		return nil, fmt.Errorf("rns: base conversion from %d moduli (at most 32)", len(from))
	}
	Q := big.NewInt(1)
	for _, m := range from {
		Q.Mul(Q, new(big.Int).SetUint64(m.Q))
	}
	b := &BConv{From: from, To: to}
	b.qHatInv = make([]uint64, len(from))
	for i, m := range from {
		qi := new(big.Int).SetUint64(m.Q)
		qHat := new(big.Int).Quo(Q, qi)
		inv := new(big.Int).ModInverse(new(big.Int).Mod(qHat, qi), qi)
		if inv == nil {
			return nil, fmt.Errorf("rns: base conversion: moduli are not coprime (%d)", m.Q)
		}
		b.qHatInv[i] = inv.Uint64()
	}
	b.qHatModP = make([][]uint64, len(to))
	b.vQModP = make([][]uint64, len(to))
	for j, p := range to {
		pj := new(big.Int).SetUint64(p.Q)
		b.qHatModP[j] = make([]uint64, len(from))
		for i, m := range from {
			qHat := new(big.Int).Quo(Q, new(big.Int).SetUint64(m.Q))
			b.qHatModP[j][i] = p.MForm(qHat.Mod(qHat, pj).Uint64())
		}
		qModP := new(big.Int).Mod(Q, pj).Uint64()
		negQ := (p.Q - qModP) % p.Q
		b.vQModP[j] = make([]uint64, len(from)+1)
		for v := 1; v <= len(from); v++ {
			s := b.vQModP[j][v-1] + negQ
			if s >= p.Q {
				s -= p.Q
			}
			b.vQModP[j][v] = s
		}
	}
	b.fast = newBConvFast(b)
	return b, nil
}

// Convert sets out[j] = the conversion of in (limbs over From, values of any
// size below 2^64, interpreted mod q_i) to To[j], in [0, p_j).
// scratch must hold len(From)·N words (nil allocates).
func (b *BConv) Convert(in, out [][]uint64, scratch []uint64) {
	k := len(b.From)
	if len(in) != k || len(out) != len(b.To) {
		panic(fmt.Sprintf("rns: base conversion expects %d inputs and %d outputs, got %d and %d", k, len(b.To), len(in), len(out)))
	}
	n := len(in[0])
	if len(scratch) < k*n {
		scratch = make([]uint64, k*n)
	}
	if useAVX512 {
		bconvAVX512(b, in, scratch, out, n)
		return
	}
	b.computeYGo(in, scratch, n)
	b.accumulateGo(scratch, out, n)
}

// computeYGo sets ys[i·n+c] = in[i][c]·(Q/q_i)^{-1} mod q_i, canonical.
func (b *BConv) computeYGo(in [][]uint64, ys []uint64, n int) {
	for i := range b.From {
		b.computeYRow(i, in[i], ys, n, 0)
	}
}

// computeYRow computes row i of ys for the coefficients from start on.
func (b *BConv) computeYRow(i int, in, ys []uint64, n, start int) {
	m := &b.From[i]
	y := ys[i*n+start : (i+1)*n]
	x := in[start:n]
	w := b.qHatInv[i]
	ws := m.ShoupConstant(w)
	for c := range y {
		r := MulShoupLazy(m.Reduce(x[c]), w, ws, m.Q)
		if r >= m.Q {
			r -= m.Q
		}
		y[c] = r
	}
}

func (b *BConv) fitsIFMA() bool { return useIFMA && b.fast.ifma }

// accumulateGo computes the outputs from the canonical y values held in ys.
func (b *BConv) accumulateGo(ys []uint64, out [][]uint64, n int) {
	b.accumulateGoFrom(ys, out, n, 0)
}

// accumulateGoFrom computes the outputs for the coefficients from start on.
func (b *BConv) accumulateGoFrom(ys []uint64, out [][]uint64, n, start int) {
	k := len(b.From)
	const blk = 64
	var v [blk]uint64
	var acc [blk][2]uint64
	for c0 := start; c0 < n; c0 += blk {
		c1 := c0 + blk
		if c1 > n {
			c1 = n
		}
		var vf [blk]float64
		for i := 0; i < k; i++ {
			qf := float64(b.From[i].Q)
			y := ys[i*n+c0 : i*n+c1]
			for c := range y {
				vf[c] += float64(y[c]) / qf
			}
		}
		for c := 0; c < c1-c0; c++ {
			v[c] = uint64(vf[c])
		}
		for j := range b.To {
			p := &b.To[j]
			row := b.qHatModP[j]
			for c := 0; c < c1-c0; c++ {
				acc[c] = [2]uint64{}
			}
			for i := 0; i < k; i++ {
				w := row[i]
				y := ys[i*n+c0 : i*n+c1]
				for c := range y {
					hi, lo := bits.Mul64(y[c], w)
					var carry uint64
					acc[c][1], carry = bits.Add64(acc[c][1], lo, 0)
					acc[c][0] += hi + carry
				}
			}
			o := out[j][c0:c1]
			vq := b.vQModP[j]
			for c := range o {
				// Montgomery step on the 128-bit sum (congruent, < 2^64), then Barrett.
				h, _ := bits.Mul64(acc[c][1]*p.MRedConst, p.Q)
				r := p.Reduce(acc[c][0] - h + p.Q)
				r += vq[v[c]]
				if r >= p.Q {
					r -= p.Q
				}
				o[c] = r
			}
		}
	}
}
