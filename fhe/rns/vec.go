package rns

import "math/bits"

// Element-wise kernels over one limb. Unless a name says Lazy, inputs are in
// [0, q) and outputs are in [0, q). Output slices may alias inputs.

// Add sets out = a + b mod q.
func Add(a, b, out []uint64, q uint64) {
	if useAVX512 {
		addAVX512(a, b, out, q)
		return
	}
	addGo(a, b, out, q)
}

func addGo(a, b, out []uint64, q uint64) {
	b = b[:len(a)]
	out = out[:len(a)]
	for i := range a {
		s := a[i] + b[i]
		if s >= q {
			s -= q
		}
		out[i] = s
	}
}

// Sub sets out = a − b mod q.
func Sub(a, b, out []uint64, q uint64) {
	if useAVX512 {
		subAVX512(a, b, out, q)
		return
	}
	subGo(a, b, out, q)
}

func subGo(a, b, out []uint64, q uint64) {
	b = b[:len(a)]
	out = out[:len(a)]
	for i := range a {
		s := a[i] + q - b[i]
		if s >= q {
			s -= q
		}
		out[i] = s
	}
}

// Neg sets out = −a mod q.
func Neg(a, out []uint64, q uint64) {
	if useAVX512 {
		negAVX512(a, out, q)
		return
	}
	negGo(a, out, q)
}

func negGo(a, out []uint64, q uint64) {
	out = out[:len(a)]
	for i := range a {
		s := q - a[i]
		if s >= q {
			s -= q
		}
		out[i] = s
	}
}

// AddScalar sets out = a + s mod q (s < q).
func AddScalar(a []uint64, s uint64, out []uint64, q uint64) {
	if useAVX512 {
		addScalarAVX512(a, s, out, q)
		return
	}
	addScalarGo(a, s, out, q)
}

func addScalarGo(a []uint64, s uint64, out []uint64, q uint64) {
	out = out[:len(a)]
	for i := range a {
		v := a[i] + s
		if v >= q {
			v -= q
		}
		out[i] = v
	}
}

// SubScalar sets out = a − s mod q (s < q).
func SubScalar(a []uint64, s uint64, out []uint64, q uint64) {
	if useAVX512 {
		subScalarAVX512(a, s, out, q)
		return
	}
	subScalarGo(a, s, out, q)
}

func subScalarGo(a []uint64, s uint64, out []uint64, q uint64) {
	out = out[:len(a)]
	for i := range a {
		v := a[i] + q - s
		if v >= q {
			v -= q
		}
		out[i] = v
	}
}

// MulMont sets out = a·b·2^{-64} mod q (Montgomery multiplication), the
// product Lattigo's MulCoeffsMontgomery computes.
func MulMont(a, b, out []uint64, m *Modulus) {
	if useAVX512 {
		mulMontAVX512(a, b, out, m)
		return
	}
	mulMontGo(a, b, out, m)
}

func mulMontGo(a, b, out []uint64, m *Modulus) {
	b = b[:len(a)]
	out = out[:len(a)]
	q, mr := m.Q, m.MRedConst
	for i := range a {
		hi, lo := bits.Mul64(a[i], b[i])
		h, _ := bits.Mul64(lo*mr, q)
		r := hi - h + q
		if r >= q {
			r -= q
		}
		out[i] = r
	}
}

// MACMont sets acc = acc + a·b·2^{-64} mod q.
func MACMont(a, b, acc []uint64, m *Modulus) {
	if useAVX512 {
		macMontAVX512(a, b, acc, m)
		return
	}
	macMontGo(a, b, acc, m)
}

func macMontGo(a, b, acc []uint64, m *Modulus) {
	b = b[:len(a)]
	acc = acc[:len(a)]
	q, mr := m.Q, m.MRedConst
	for i := range a {
		hi, lo := bits.Mul64(a[i], b[i])
		acc[i] = mredAdd(hi, lo, acc[i], q, mr)
	}
}

// mredAdd returns acc + MRed(hi·2^64 + lo) mod q, for acc < q and
// hi·2^64 + lo < q·2^64 (then MRed's r = hi − h + q is in (0, 2q)).
func mredAdd(hi, lo, acc, q, mr uint64) uint64 {
	h, _ := bits.Mul64(lo*mr, q)
	r := hi - h + q
	if r >= q {
		r -= q
	}
	s := acc + r
	if s >= q {
		s -= q
	}
	return s
}

// MACMontSum sets acc = acc + Σ_k as[k]·bs[k]·2^{-64} mod q, every slice
// of acc's length and every input word below q: a dot product over k per
// slot, the same value as len(as) calls of MACMont. It reduces once per
// group of products, not once per product: a group's products are summed
// exactly and Montgomery-reduced together. The in-place diagonal products
// of the LWE scheme's ring stage are such sums, of 64 baby steps.
func MACMontSum(as, bs [][]uint64, acc []uint64, m *Modulus) {
	if len(as) != len(bs) {
		panic("rns: MACMontSum of unequal term counts")
	}
	if useAVX512 {
		macMontSumAVX512(as, bs, acc, m)
		return
	}
	macMontSumGo(as, bs, acc, m)
}

// macMontSumGo sums groups of eight products in 128 bits: for q < 2^61 a
// group's sum V < 8·q² < q·2^64, the bound for MRed(V) ∈ [0, 2q).
func macMontSumGo(as, bs [][]uint64, acc []uint64, m *Modulus) {
	q, mr := m.Q, m.MRedConst
	if q >= 1<<61 {
		for k := range as {
			macMontGo(as[k], bs[k], acc, m)
		}
		return
	}
	for len(as) > 0 {
		g := min(len(as), 8)
		ga, gb := as[:g], bs[:g]
		for i := range acc {
			var hi, lo uint64
			for k := range ga {
				h, l := bits.Mul64(ga[k][i], gb[k][i])
				var c uint64
				lo, c = bits.Add64(lo, l, 0)
				hi += h + c
			}
			acc[i] = mredAdd(hi, lo, acc[i], q, mr)
		}
		as, bs = as[g:], bs[g:]
	}
}

// MulBarrett sets out = a·b mod q (plain modular product).
func MulBarrett(a, b, out []uint64, m *Modulus) {
	if useAVX512 {
		mulBarrettAVX512(a, b, out, m)
		return
	}
	mulBarrettGo(a, b, out, m)
}

func mulBarrettGo(a, b, out []uint64, m *Modulus) {
	b = b[:len(a)]
	out = out[:len(a)]
	for i := range a {
		out[i] = m.BRed(a[i], b[i])
	}
}

// MulScalarMont sets out = a·s·2^{-64} mod q.
func MulScalarMont(a []uint64, s uint64, out []uint64, m *Modulus) {
	if useAVX512 {
		mulScalarMontAVX512(a, s, out, m)
		return
	}
	mulScalarMontGo(a, s, out, m)
}

func mulScalarMontGo(a []uint64, s uint64, out []uint64, m *Modulus) {
	out = out[:len(a)]
	for i := range a {
		out[i] = m.MRed(a[i], s)
	}
}

// MulScalar sets out = a·s mod q for s < q (Shoup multiplication).
func MulScalar(a []uint64, s uint64, out []uint64, m *Modulus) {
	if useAVX512 {
		mulScalarAVX512(a, s, out, m)
		return
	}
	mulScalarGo(a, s, out, m)
}

func mulScalarGo(a []uint64, s uint64, out []uint64, m *Modulus) {
	out = out[:len(a)]
	ws := m.ShoupConstant(s)
	q := m.Q
	for i := range a {
		r := MulShoupLazy(a[i], s, ws, q)
		if r >= q {
			r -= q
		}
		out[i] = r
	}
}

// Reduce sets out = a mod q for arbitrary 64-bit inputs.
func Reduce(a, out []uint64, m *Modulus) {
	if useAVX512 {
		reduceAVX512(a, out, m)
		return
	}
	reduceGo(a, out, m)
}

func reduceGo(a, out []uint64, m *Modulus) {
	out = out[:len(a)]
	for i := range a {
		out[i] = m.Reduce(a[i])
	}
}
