package rns

// bconvFast holds the constants of the assembly base conversion: the float64
// divisors of the overflow estimate for every basis, and, when every modulus
// of both bases is below 2^50 (and the targets above 16), those of the IFMA
// kernels.
type bconvFast struct {
	qf   []float64  // float64(q_i)
	ifma bool       // the IFMA constants below are set
	w    [][]uint64 // [j] = {(Q/q_i mod p_j)·2^104 mod p_j}_i, then (−Q mod p_j)·2^104 mod p_j
	pinv []uint64   // p_j^{-1} mod 2^52
	// For y_i = x·(Q/q_i)^{-1} mod q_i: q_i^{-1} mod 2^52 and
	// ya = (Q/q_i)^{-1}·2^104, yb = ya·2^52 (mod q_i).
	qinv, ya, yb []uint64
}

func newBConvFast(b *BConv) *bconvFast {
	k := len(b.From)
	c := &bconvFast{qf: make([]float64, k)}
	for i, m := range b.From {
		c.qf[i] = float64(m.Q)
	}
	for _, m := range b.From {
		if m.Q >= 1<<50 {
			return c
		}
	}
	for _, p := range b.To {
		if p.Q >= 1<<50 || p.Q <= 16 {
			return c
		}
	}
	c.ifma = true
	c.w, c.pinv = make([][]uint64, len(b.To)), make([]uint64, len(b.To))
	c.qinv, c.ya, c.yb = make([]uint64, k), make([]uint64, k), make([]uint64, k)
	for i, m := range b.From {
		r52 := (1 << 52) % m.Q
		c.qinv[i] = m.MRedConst & (1<<52 - 1)
		c.ya[i] = mulMod(b.qHatInv[i], mulMod(r52, r52, m.Q), m.Q)
		c.yb[i] = mulMod(c.ya[i], r52, m.Q)
	}
	for j := range b.To {
		p := &b.To[j]
		r40 := (1 << 40) % p.Q                        // qHatModP holds x·2^64; times 2^40 gives x·2^104
		r104 := mulMod((1<<52)%p.Q, (1<<52)%p.Q, p.Q) // vQModP[j][1] = −Q mod p holds no factor
		c.w[j] = make([]uint64, k+1)
		for i := 0; i < k; i++ {
			c.w[j][i] = mulMod(b.qHatModP[j][i], r40, p.Q)
		}
		c.w[j][k] = mulMod(b.vQModP[j][1], r104, p.Q)
		c.pinv[j] = p.MRedConst & (1<<52 - 1)
	}
	return c
}
