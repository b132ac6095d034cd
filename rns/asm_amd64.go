//go:build amd64 && !purego

package rns

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
func invLastIFMA(a *uint64, n int, w, ws, ni, nis, q, red uint64)

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
	src, dst := &in[0], &out[0]
	for m, h := 1, n/2; h >= 8; m, h = 2*m, h/2 {
		fwdStageIFMA(dst, src, n, h, &t.Roots[m], &t.roots52[m], t.Q)
		src = dst
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
	for h, s := n/16, 8; s < n/2; h, s = h/2, 2*s {
		invStageIFMA(p, n, s, &t.RootsInv[h], &t.rootsInv52[h], t.Q)
	}
	invLastIFMA(p, n, t.invLastW, t.invLastW52, t.NInv, t.nInv52, t.Q, red)
}

func addAVX512(a, b, out []uint64, q uint64)         { addGo(a, b, out, q) }
func subAVX512(a, b, out []uint64, q uint64)         { subGo(a, b, out, q) }
func mulMontAVX512(a, b, out []uint64, m *Modulus)   { mulMontGo(a, b, out, m) }
func macMontAVX512(a, b, acc []uint64, m *Modulus)   { macMontGo(a, b, acc, m) }
func permuteAVX512(in, out []uint64, index []uint32) { permuteGo(in, out, index) }
func bconvAVX512(b *BConv, ys []uint64, out [][]uint64, n int) {
	b.accumulateGo(ys, out, n)
}
