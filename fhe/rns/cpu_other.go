//go:build !amd64 || purego

package rns

var useIFMA, useAVX512 bool

func detect() {}

func nttFast(t *NTTTable, in, out []uint64, canonical bool)  { panic("rns: no assembly kernels") }
func inttFast(t *NTTTable, in, out []uint64, canonical bool) { panic("rns: no assembly kernels") }

func addAVX512(a, b, out []uint64, q uint64)       { addGo(a, b, out, q) }
func subAVX512(a, b, out []uint64, q uint64)       { subGo(a, b, out, q) }
func mulMontAVX512(a, b, out []uint64, m *Modulus) { mulMontGo(a, b, out, m) }
func macMontAVX512(a, b, acc []uint64, m *Modulus) { macMontGo(a, b, acc, m) }
func macMontSumAVX512(as, bs [][]uint64, acc []uint64, m *Modulus) {
	macMontSumGo(as, bs, acc, m)
}
func permuteAVX512(in, out []uint64, index []uint32) { permuteGo(in, out, index) }
func bconvAVX512(b *BConv, in [][]uint64, ys []uint64, out [][]uint64, n int) {
	b.computeYGo(in, ys, n)
	b.accumulateGo(ys, out, n)
}

func addScalarAVX512(a []uint64, s uint64, out []uint64, q uint64)   { addScalarGo(a, s, out, q) }
func subScalarAVX512(a []uint64, s uint64, out []uint64, q uint64)   { subScalarGo(a, s, out, q) }
func negAVX512(a, out []uint64, q uint64)                            { negGo(a, out, q) }
func mulScalarAVX512(a []uint64, w uint64, out []uint64, m *Modulus) { mulScalarGo(a, w, out, m) }
func mulScalarMontAVX512(a []uint64, s uint64, out []uint64, m *Modulus) {
	mulScalarMontGo(a, s, out, m)
}
func mulBarrettAVX512(a, b, out []uint64, m *Modulus) { mulBarrettGo(a, b, out, m) }
func reduceAVX512(a, out []uint64, m *Modulus)        { reduceGo(a, out, m) }
