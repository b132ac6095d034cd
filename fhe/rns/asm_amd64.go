//go:build amd64 && !purego

package rns

import "fmt"

// The assembly kernels live in *_amd64.s; the functions here drive them.
const asmAVX512Ready = true
const asmIFMAReady = true

// NTT stages in ntt_amd64.s. Pointers address the first element of the
// slice the stage reads; the stages after the first work in place.

//go:noescape
func fwdStageIFMA(dst, src *uint64, n, t int, w, ws *uint64, q uint64)

//go:noescape
func fwdLast3IFMA(a *uint64, n int, r4, r4s, t2, t2s, t1, t1s *uint64, q, red uint64)

//go:noescape
func invFirst3IFMA(dst, src *uint64, n int, t1, t1s, t2, t2s, r4, r4s *uint64, q uint64)

//go:noescape
func invStageIFMA(a *uint64, n, t int, w, ws *uint64, q uint64)

//go:noescape
func fwdRadix4IFMA(a *uint64, n, t int, w1, ws1, w2, ws2 *uint64, q uint64)

//go:noescape
func invRadix4IFMA(a *uint64, n, s int, w1, ws1, w2, ws2 *uint64, q uint64)

//go:noescape
func invLastIFMA(a *uint64, n int, w, ws, ni, nis, q, red uint64)

// AVX-512F NTT stages in ntt64_amd64.s (q ≥ 2^50), same shapes.

//go:noescape
func fwdStage64(dst, src *uint64, n, t int, w, ws *uint64, q uint64)

//go:noescape
func fwdLast3_64(a *uint64, n int, r4, r4s, t2, t2s, t1, t1s *uint64, q, red uint64)

//go:noescape
func invFirst3_64(dst, src *uint64, n int, t1, t1s, t2, t2s, r4, r4s *uint64, q uint64)

//go:noescape
func invStage64(a *uint64, n, t int, w, ws *uint64, q uint64)

//go:noescape
func invLast64(a *uint64, n int, w, ws, ni, nis, q, red uint64)

// nttFast runs the IFMA NTT when the table has 52-bit companions and the CPU
// IFMA, else the AVX-512F one (t.accelerated() holds).
func nttFast(t *NTTTable, in, out []uint64, canonical bool) {
	if useIFMA && t.roots52 != nil {
		nttIFMA(t, in, out, canonical)
		return
	}
	n := t.N
	in, out = in[:n], out[:n]
	red := 2 * t.Q
	if canonical {
		red = t.Q
	}
	src, dst := &in[0], &out[0]
	for m, h := 1, n/2; h >= 8; m, h = 2*m, h/2 {
		fwdStage64(dst, src, n, h, &t.Roots[m], &t.rootsShoup[m], t.Q)
		src = dst
	}
	tw := &t.fwdInner64
	fwdLast3_64(dst, n, &t.Roots[n/8], &t.rootsShoup[n/8], &tw[0][0], &tw[1][0], &tw[2][0], &tw[3][0], t.Q, red)
}

// inttFast is nttFast for the inverse transform.
func inttFast(t *NTTTable, in, out []uint64, canonical bool) {
	if useIFMA && t.rootsInv52 != nil {
		inttIFMA(t, in, out, canonical)
		return
	}
	n := t.N
	in, out = in[:n], out[:n]
	red := 2 * t.Q
	if canonical {
		red = t.Q
	}
	p := &out[0]
	tw := &t.invInner64
	invFirst3_64(p, &in[0], n, &tw[2][0], &tw[3][0], &tw[0][0], &tw[1][0], &t.RootsInv[n/8], &t.rootsInvShoup[n/8], t.Q)
	for h, s := n/16, 8; s < n/2; h, s = h/2, 2*s {
		invStage64(p, n, s, &t.RootsInv[h], &t.rootsInvShoup[h], t.Q)
	}
	invLast64(p, n, t.invLastW, t.invLastWShoup, t.NInv, t.nInvShoup, t.Q, red)
}

// nttIFMA computes out = NTT(in) like nttGo but with 52-bit Shoup butterflies
// (q < 2^50): inputs in [0, 4q); outputs in [0, q) when canonical, else in
// [0, 2q), congruent to nttGo's. in and out may alias.
func nttIFMA(t *NTTTable, in, out []uint64, canonical bool) {
	n := t.N
	in, out = in[:n], out[:n]
	red := 2 * t.Q
	if canonical {
		red = t.Q
	}
	dst := &out[0]
	// The first stage moves in to out; then pairs of stages in one pass
	// while both have distance ≥ 8, one more single stage if needed.
	fwdStageIFMA(dst, &in[0], n, n/2, &t.Roots[1], &t.roots52[1], t.Q)
	m, h := 2, n/4
	for ; h >= 16; m, h = 4*m, h/4 {
		fwdRadix4IFMA(dst, n, h, &t.Roots[m], &t.roots52[m], &t.Roots[2*m], &t.roots52[2*m], t.Q)
	}
	if h == 8 {
		fwdStageIFMA(dst, dst, n, h, &t.Roots[m], &t.roots52[m], t.Q)
	}
	tw := &t.fwdInner52
	fwdLast3IFMA(dst, n, &t.Roots[n/8], &t.roots52[n/8], &tw[0][0], &tw[1][0], &tw[2][0], &tw[3][0], t.Q, red)
}

// inttIFMA computes out = INTT(in) like inttGo with 52-bit Shoup butterflies:
// inputs in [0, 4q); outputs in [0, q) when canonical, else in [0, 2q).
// in and out may alias.
func inttIFMA(t *NTTTable, in, out []uint64, canonical bool) {
	n := t.N
	in, out = in[:n], out[:n]
	red := 2 * t.Q
	if canonical {
		red = t.Q
	}
	p := &out[0]
	tw := &t.invInner52
	invFirst3IFMA(p, &in[0], n, &tw[2][0], &tw[3][0], &tw[0][0], &tw[1][0], &t.RootsInv[n/8], &t.rootsInv52[n/8], t.Q)
	h, s := n/16, 8
	for ; 2*s < n/2; h, s = h/4, 4*s {
		invRadix4IFMA(p, n, s, &t.RootsInv[h], &t.rootsInv52[h], &t.RootsInv[h/2], &t.rootsInv52[h/2], t.Q)
	}
	if s < n/2 {
		invStageIFMA(p, n, s, &t.RootsInv[h], &t.rootsInv52[h], t.Q)
	}
	invLastIFMA(p, n, t.invLastW, t.invLastW52, t.NInv, t.nInv52, t.Q, red)
}

// Element-wise kernels in vec_amd64.s; n is a multiple of 8.

//go:noescape
func addVec(a, b, out *uint64, n int, q uint64)

//go:noescape
func subVec(a, b, out *uint64, n int, q uint64)

//go:noescape
func mulMontVec(a, b, out *uint64, n int, q, qinv, k, ks uint64)

//go:noescape
func macMontVec(a, b, acc *uint64, n int, q, qinv, k, ks uint64)

//go:noescape
func mulMont64Vec(a, b, out *uint64, n int, q, mr uint64)

//go:noescape
func macMont64Vec(a, b, acc *uint64, n int, q, mr uint64)

//go:noescape
func permuteBlocksVec(in, out *uint64, index *uint32, n int, lastBlock uint64) (spill, max uint64)

//go:noescape
func gatherVec(in, out *uint64, index *uint32, n int, last uint32) uint32

func addAVX512(a, b, out []uint64, q uint64) {
	n := len(a)
	b, out = b[:n], out[:n]
	if n8 := n &^ 7; n8 > 0 {
		addVec(&a[0], &b[0], &out[0], n8, q)
		a, b, out = a[n8:], b[n8:], out[n8:]
	}
	addGo(a, b, out, q)
}

func subAVX512(a, b, out []uint64, q uint64) {
	n := len(a)
	b, out = b[:n], out[:n]
	if n8 := n &^ 7; n8 > 0 {
		subVec(&a[0], &b[0], &out[0], n8, q)
		a, b, out = a[n8:], b[n8:], out[n8:]
	}
	subGo(a, b, out, q)
}

// montIFMAConstants returns q^-1 mod 2^52, k = 2^-12 mod q and ⌊k·2^52/q⌋,
// the constants of the IFMA Montgomery product (q < 2^50): a·b·2^-64 =
// (a·b·2^-52)·2^-12. k = (1 + t·q)/2^12 with t = −q^-1 mod 2^12.
func montIFMAConstants(m *Modulus) (qinv, k, ks uint64) {
	qinv = m.MRedConst & (1<<52 - 1)
	t := -m.MRedConst & (1<<12 - 1)
	k = (1 + t*m.Q) >> 12
	return qinv, k, shoup52(k, m.Q)
}

// mulMontAVX512 runs the IFMA kernel for q < 2^50 (inputs with
// a·b < q·2^52, canonical ones qualify) and the AVX-512F one otherwise (the
// very operations of mulMontGo).
func mulMontAVX512(a, b, out []uint64, m *Modulus) {
	n := len(a)
	b, out = b[:n], out[:n]
	if n8 := n &^ 7; n8 > 0 {
		if useIFMA && m.Q < 1<<50 {
			qinv, k, ks := montIFMAConstants(m)
			mulMontVec(&a[0], &b[0], &out[0], n8, m.Q, qinv, k, ks)
		} else {
			mulMont64Vec(&a[0], &b[0], &out[0], n8, m.Q, m.MRedConst)
		}
		a, b, out = a[n8:], b[n8:], out[n8:]
	}
	mulMontGo(a, b, out, m)
}

func macMontAVX512(a, b, acc []uint64, m *Modulus) {
	n := len(a)
	b, acc = b[:n], acc[:n]
	if n8 := n &^ 7; n8 > 0 {
		if useIFMA && m.Q < 1<<50 {
			qinv, k, ks := montIFMAConstants(m)
			macMontVec(&a[0], &b[0], &acc[0], n8, m.Q, qinv, k, ks)
		} else {
			macMont64Vec(&a[0], &b[0], &acc[0], n8, m.Q, m.MRedConst)
		}
		a, b, acc = a[n8:], b[n8:], acc[n8:]
	}
	macMontGo(a, b, acc, m)
}

// macMontSum64Vec adds to acc[i], for i < n (a multiple of 8), the
// Montgomery reduction of Σ_{k<terms} a_k[i]·b_k[i], a_k = *as[k]: the
// products are summed exactly in three 64-bit lanes from 30-bit halves
// (AVX-512F has no 64×64-bit multiply: four 32×32-bit ones per product, and
// nothing is reduced until the group is summed). 1 ≤ terms ≤
// sumGroup64(q).
//
//go:noescape
func macMontSum64Vec(as, bs **uint64, terms int, acc *uint64, n int, q, mr uint64)

// sumGroup64 is how many products macMontSum64Vec may sum for q (0: none).
// With a = a1·2^30 + a0 (a0 < 2^30, a1 ≤ ⌊(q−1)/2^30⌋, which a 32-bit
// multiply takes while q ≤ 2^62) the three lanes gain below 2^60, 2·2^30·a1
// and a1² per product, each lane must stay below 2^64, and the group's sum
// below q·2^64 for the reduction: 8 for q < 2^60, 7 just above 2^60.
func sumGroup64(q uint64) int {
	if q > 1<<62 {
		return 0
	}
	a1 := (q - 1) >> 30
	const lim = ^uint64(0)
	g := min(8, lim/((1<<30-1)*(1<<30-1)), lim/q)
	if a1 > 0 {
		g = min(g, lim/(2*(1<<30-1)*a1), lim/(a1*a1))
	}
	return int(g)
}

func macMontSumAVX512(as, bs [][]uint64, acc []uint64, m *Modulus) {
	n := len(acc)
	n8 := n &^ 7
	if useIFMA && m.Q < 1<<50 {
		// IFMA's 52-bit products beat the grouped sum (0.63 against
		// 0.73–0.85 ns per product, BenchmarkMACMontSum).
		for k := range as {
			macMontAVX512(as[k], bs[k], acc, m)
		}
		return
	}
	group := sumGroup64(m.Q)
	if group < 2 || n8 == 0 {
		macMontSumGo(as, bs, acc, m)
		return
	}
	var pa, pb [8]*uint64
	for k0 := 0; k0 < len(as); k0 += group {
		g := min(len(as)-k0, group)
		for k := range g {
			pa[k], pb[k] = &as[k0+k][:n][0], &bs[k0+k][:n][0]
		}
		macMontSum64Vec(&pa[0], &pb[0], g, &acc[0], n8, m.Q, m.MRedConst)
	}
	// The last n mod 8 slots, product by product (the same residues).
	for k := range as {
		macMontGo(as[k][n8:n], bs[k][n8:n], acc[n8:], m)
	}
}

// permuteAVX512 first tries the block-permute kernel (valid for NTT-domain
// automorphism tables, whose aligned blocks of 8 outputs read aligned blocks
// of 8 inputs) and falls back to gathers for other index tables.
func permuteAVX512(in, out []uint64, index []uint32) {
	n := len(index)
	out = out[:n]
	n8 := n &^ 7
	if n8 == 0 || len(in) == 0 || len(in) > 1<<31 {
		permuteGo(in, out, index)
		return
	}
	last := uint32(len(in) - 1)
	done := false
	if len(in) >= 8 && len(in)%8 == 0 {
		spill, mx := permuteBlocksVec(&in[0], &out[0], &index[0], n8, uint64(len(in)-8))
		if mx > uint64(last) {
			panic(fmt.Sprintf("rns: permutation index %d out of range [0, %d)", mx, len(in)))
		}
		done = spill&^7 == 0
	}
	if !done {
		if mx := gatherVec(&in[0], &out[0], &index[0], n8, last); mx > last {
			panic(fmt.Sprintf("rns: permutation index %d out of range [0, %d)", mx, len(in)))
		}
	}
	permuteGo(in, out[n8:], index[n8:])
}

//go:noescape
func addScalarVec(a, out *uint64, n int, s, q uint64)

//go:noescape
func negVec(a, out *uint64, n int, q uint64)

//go:noescape
func mulScalarVec(a, out *uint64, n int, w, ws, q uint64)

func addScalarAVX512(a []uint64, s uint64, out []uint64, q uint64) {
	out = out[:len(a)]
	if n8 := len(a) &^ 7; n8 > 0 {
		addScalarVec(&a[0], &out[0], n8, s, q)
		a, out = a[n8:], out[n8:]
	}
	addScalarGo(a, s, out, q)
}

func subScalarAVX512(a []uint64, s uint64, out []uint64, q uint64) {
	out = out[:len(a)]
	if n8 := len(a) &^ 7; n8 > 0 {
		addScalarVec(&a[0], &out[0], n8, q-s, q)
		a, out = a[n8:], out[n8:]
	}
	subScalarGo(a, s, out, q)
}

func negAVX512(a, out []uint64, q uint64) {
	out = out[:len(a)]
	if n8 := len(a) &^ 7; n8 > 0 {
		negVec(&a[0], &out[0], n8, q)
		a, out = a[n8:], out[n8:]
	}
	negGo(a, out, q)
}

//go:noescape
func mulScalarMont64Vec(a, out *uint64, n int, s, q, mr uint64)

//go:noescape
func mulBarrett64Vec(a, b, out *uint64, n int, q, mr, r2 uint64)

//go:noescape
func mulScalar64Vec(a, out *uint64, n int, w, ws, q uint64)

//go:noescape
func reduce64Vec(a, out *uint64, n int, q, bred uint64)

// mulScalarAVX512 sets out = a·w mod q (w < q): IFMA Shoup for q < 2^50
// (a < 2^52), else the 64-bit Shoup product of the Go code.
func mulScalarAVX512(a []uint64, w uint64, out []uint64, m *Modulus) {
	out = out[:len(a)]
	if n8 := len(a) &^ 7; n8 > 0 {
		if useIFMA && m.Q < 1<<50 {
			mulScalarVec(&a[0], &out[0], n8, w, shoup52(w, m.Q), m.Q)
		} else {
			mulScalar64Vec(&a[0], &out[0], n8, w, m.ShoupConstant(w), m.Q)
		}
		a, out = a[n8:], out[n8:]
	}
	mulScalarGo(a, w, out, m)
}

// mulScalarMontAVX512 sets out = a·s·2^-64 mod q: for q < 2^50 one IFMA
// Shoup product by s·2^-64 mod q, else MRed on eight lanes.
func mulScalarMontAVX512(a []uint64, s uint64, out []uint64, m *Modulus) {
	out = out[:len(a)]
	if n8 := len(a) &^ 7; n8 > 0 {
		if useIFMA && m.Q < 1<<50 {
			w := m.IMForm(s)
			mulScalarVec(&a[0], &out[0], n8, w, shoup52(w, m.Q), m.Q)
		} else {
			mulScalarMont64Vec(&a[0], &out[0], n8, s, m.Q, m.MRedConst)
		}
		a, out = a[n8:], out[n8:]
	}
	mulScalarMontGo(a, s, out, m)
}

// mulBarrettAVX512 sets out = a·b mod q for inputs with a·b < q·2^52 (IFMA,
// q < 2^50: the radix-2^52 Montgomery product times 2^52 mod q) or
// a·b < q·2^64 (AVX-512F: MRed(MRed(a, b), 2^128 mod q)).
func mulBarrettAVX512(a, b, out []uint64, m *Modulus) {
	n := len(a)
	b, out = b[:n], out[:n]
	if n8 := n &^ 7; n8 > 0 {
		if useIFMA && m.Q < 1<<50 {
			k := (1 << 52) % m.Q
			mulMontVec(&a[0], &b[0], &out[0], n8, m.Q, m.MRedConst&(1<<52-1), k, shoup52(k, m.Q))
		} else {
			mulBarrett64Vec(&a[0], &b[0], &out[0], n8, m.Q, m.MRedConst, m.R2)
		}
		a, b, out = a[n8:], b[n8:], out[n8:]
	}
	mulBarrettGo(a, b, out, m)
}

// reduceAVX512 sets out = a mod q for any 64-bit a: for q < 2^50,
// a = ah·2^52 + al ≡ (al·2^104 + ah·2^156)·2^-104 reduced with bconvYIFMA's
// REDC2; else the Barrett reduction of the Go code.
func reduceAVX512(a, out []uint64, m *Modulus) {
	out = out[:len(a)]
	if n8 := len(a) &^ 7; n8 > 0 {
		if useIFMA && m.Q < 1<<50 {
			r52 := (1 << 52) % m.Q
			r104 := mulMod(r52, r52, m.Q)
			bconvYIFMA(&a[0], &out[0], n8, m.Q, m.MRedConst&(1<<52-1), r104, mulMod(r104, r52, m.Q))
		} else {
			reduce64Vec(&a[0], &out[0], n8, m.Q, m.BRedConst[0])
		}
		a, out = a[n8:], out[n8:]
	}
	reduceGo(a, out, m)
}

// Base conversion kernels in bconv_amd64.s; cnt is a multiple of 16.

//go:noescape
func bconvVIFMA(ys *uint64, stride, cnt, k int, qf *float64, v *uint64)

//go:noescape
func bconvAccIFMA(ys *uint64, stride, cnt, k int, w, v, out *uint64, p, pinv uint64)

//go:noescape
func bconvYIFMA(x, y *uint64, n int, q, qinv, a, b uint64)

//go:noescape
func bconvY64(x, y *uint64, n int, q, bred, w, ws uint64)

//go:noescape
func bconvAcc64(ys *uint64, stride, cnt, k int, w, v, out *uint64, p, mred, bred uint64, vq *uint64)

// bconvAVX512 computes the y_i rows into ys, then the outputs over blocks of
// coefficients small enough for the k rows to stay in cache: with IFMA when
// b.fitsIFMA(), else with the AVX-512F kernels (any moduli).
func bconvAVX512(b *BConv, in [][]uint64, ys []uint64, out [][]uint64, n int) {
	const blk = 512
	var v [blk]uint64
	k := len(b.From)
	c := b.fast
	ifma := b.fitsIFMA()
	ys = ys[:k*n]
	n8 := n &^ 7
	for i := range in {
		x, y := in[i][:n], ys[i*n:(i+1)*n]
		if n8 > 0 {
			m := &b.From[i]
			if ifma {
				bconvYIFMA(&x[0], &y[0], n8, m.Q, c.qinv[i], c.ya[i], c.yb[i])
			} else {
				w := b.qHatInv[i]
				bconvY64(&x[0], &y[0], n8, m.Q, m.BRedConst[0], w, m.ShoupConstant(w))
			}
		}
		b.computeYRow(i, in[i], ys, n, n8)
	}
	n16 := n &^ 15
	for c0 := 0; c0 < n16; c0 += blk {
		cnt := min(blk, n16-c0)
		bconvVIFMA(&ys[c0], n, cnt, k, &c.qf[0], &v[0])
		for j := range out {
			o := out[j][c0:n]
			p := &b.To[j]
			if ifma {
				bconvAccIFMA(&ys[c0], n, cnt, k, &c.w[j][0], &v[0], &o[0], p.Q, c.pinv[j])
			} else {
				bconvAcc64(&ys[c0], n, cnt, k, &b.qHatModP[j][0], &v[0], &o[0], p.Q, p.MRedConst, p.BRedConst[0], &b.vQModP[j][0])
			}
		}
	}
	b.accumulateGoFrom(ys, out, n, n16)
}
