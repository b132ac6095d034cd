//go:build !amd64 || purego

package ot

const useAESNI = false

func encryptBlocksAsm(rk *[176]byte, dst, src *block, n int) {
	panic("ot: no AES-NI kernel on this platform")
}

func lpnGatherAsm(secret *block, u *byte, k uint64, dst *block, rows int, bits, bitsOut *uint8, rk *[176]byte, next *byte, blocks int, ctr uint64) {
	panic("ot: no assembly gather on this platform")
}

const useAsmGather = false

func ggmChildrenAsm(rk0, rk1 *[176]byte, par, out *block, n int, sums *[2]block) {
	panic("ot: no AES-NI kernel on this platform")
}

var useGGMAsm = false
