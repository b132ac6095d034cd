//go:build amd64 && !purego

package rns

// The assembly kernels are not written yet: these Go bodies stand in so the
// dispatch compiles; asm*Ready keeps them switched off.
const asmAVX512Ready = false
const asmIFMAReady = false

func nttIFMA(t *NTTTable, a []uint64)  { nttGo(t, a) }
func inttIFMA(t *NTTTable, a []uint64) { inttGo(t, a) }

func addAVX512(a, b, out []uint64, q uint64)         { addGo(a, b, out, q) }
func subAVX512(a, b, out []uint64, q uint64)         { subGo(a, b, out, q) }
func mulMontAVX512(a, b, out []uint64, m *Modulus)   { mulMontGo(a, b, out, m) }
func macMontAVX512(a, b, acc []uint64, m *Modulus)   { macMontGo(a, b, acc, m) }
func permuteAVX512(in, out []uint64, index []uint32) { permuteGo(in, out, index) }
func bconvAVX512(b *BConv, ys []uint64, out [][]uint64, n int) {
	b.accumulateGo(ys, out, n)
}
