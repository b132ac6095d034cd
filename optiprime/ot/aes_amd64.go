//go:build amd64 && !purego

package ot

import "golang.org/x/sys/cpu"

// useAESNI selects the AES-NI kernel; x/sys/cpu reports the instructions.
var useAESNI = cpu.X86.HasAES && cpu.X86.HasSSE41

// encryptBlocksAsm encrypts n ≥ 1 blocks from src to dst under the
// expanded AES-128 key rk, eight at a time, then one at a time.
//
//go:noescape
func encryptBlocksAsm(rk *[176]byte, dst, src *block, n int)

// lpnGatherAsm XORs into dst[r] (and into bitsOut[r] unless bits is nil)
// the entries of secret (and of bits) that row r selects, for r < rows, its
// indices decoded from the 4·lpnWeight·rows bytes of AES-CTR stream at u
// as lpnIndices does; every index is below k ≤ len(secret). Meanwhile it
// writes into next the stream's blocks ctr, ctr+1, … (blocks of them, and
// up to two more; none unless blocks > 0, which needs AES-NI) under the
// expanded key rk. See lpn_amd64.s.
//
//go:noescape
func lpnGatherAsm(secret *block, u *byte, k uint64, dst *block, rows int, bits, bitsOut *uint8, rk *[176]byte, next *byte, blocks int, ctr uint64)

// useAsmGather selects lpnGatherAsm (SSE2 only: every amd64 has it).
const useAsmGather = true

// ggmChildrenAsm expands n ≥ 1 GGM parents into out (children of parent k
// at 2k, 2k+1: π_b(x) ⊕ x under the expanded keys rk0, rk1) and XORs the
// left and right children into sums[0], sums[1].
//
//go:noescape
func ggmChildrenAsm(rk0, rk1 *[176]byte, par, out *block, n int, sums *[2]block)

// useGGMAsm selects ggmChildrenAsm (a variable so that a benchmark can
// compare it with fixedAES.encrypt's path).
var useGGMAsm = useAESNI
