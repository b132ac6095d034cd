package ot

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// The GGM trees of the single-point COTs double each node x into
// (π0(x) ⊕ x, π1(x) ⊕ x), π_b AES-128 under a fixed public key: the
// Matyas–Meyer–Oseas length-doubling PRG that Ferret's implementation uses,
// secure when AES is modelled as an ideal cipher (Guo, Katz, Wang, Weng, Yu,
// "Efficient and Secure Multiparty Computation from Fixed-Key Block
// Ciphers", IEEE S&P 2020). A fixed key keeps the key schedule out of the
// inner loop (one per node otherwise), and lets a level's nodes be
// encrypted many blocks per call.
var ggmAES = [2]*fixedAES{newFixedAES("RMGGM0"), newFixedAES("RMGGM1")}

// ggmChunk is the number of parent nodes expanded per pass: π0 and π1 run
// over the chunk in two calls of many blocks each (fixedAES), not two
// calls per node.
const ggmChunk = 256

// ggmLevel replaces nodes 0..2^l−1 by their children (node j's at 2j,
// 2j+1) and returns the XOR of the left and of the right children. Chunks
// go from the top down and each chunk's parents are copied out first: the
// children of [lo, hi) land in [2lo, 2hi), never below lo, where the
// parents still to expand are.
func (h *hasher) ggmLevel(tree []block, l int) (s0, s1 block) {
	for hi := 1 << l; hi > 0; hi -= ggmChunk {
		lo := max(0, hi-ggmChunk)
		par, c0, c1 := h.par[:hi-lo], h.c0[:hi-lo], h.c1[:hi-lo]
		copy(par, tree[lo:hi])
		if useGGMAsm { // both children and the sums in one pass
			sums := [2]block{s0, s1}
			ggmChildrenAsm(&ggmAES[0].rk, &ggmAES[1].rk, &par[0], &tree[2*lo], len(par), &sums)
			s0, s1 = sums[0], sums[1]
			continue
		}
		ggmAES[0].encrypt(c0, par)
		ggmAES[1].encrypt(c1, par)
		for k, x := range par {
			a, b := c0[k].xor(x), c1[k].xor(x)
			tree[2*(lo+k)], tree[2*(lo+k)+1] = a, b
			s0, s1 = s0.xor(a), s1.xor(b)
		}
	}
	return s0, s1
}

// ggmExpand grows the tree whose root is tree[0] into its 2^h leaves in
// place (the children of node j are 2j and 2j+1, so the leaf index reads
// the path from its most significant bit) and returns in sums[l] the XOR
// of the left and of the right children at depth l+1.
func ggmExpand(hs *hasher, tree []block, h int, sums [][2]block) {
	for l := 0; l < h; l++ {
		s0, s1 := hs.ggmLevel(tree, l)
		sums[l] = [2]block{s0, s1}
	}
}

// ggmPuncture rebuilds every leaf of a tree except leaf alpha (left zero)
// from the XOR of each depth's children on the side off the path to alpha
// (sibling[l] at depth l+1).
func ggmPuncture(hs *hasher, tree []block, h, alpha int, sibling []block) {
	a := alpha >> (h - 1) & 1
	tree[a^1], tree[a] = sibling[0], block{}
	path := a
	for l := 1; l < h; l++ {
		var s [2]block
		s[0], s[1] = hs.ggmLevel(tree, l)
		// The path node was unknown (zero): take its children out of the
		// sums, then the off-path child is the sibling sum minus the rest.
		a = alpha >> (h - 1 - l) & 1
		off := 2*path + 1 - a
		tree[off] = sibling[l].xor(s[1-a]).xor(tree[off])
		path = 2*path + a
		tree[path] = block{}
	}
}

// lpnEncode's gather is written out for 10 nonzeros per row.
const _ = uint(lpnWeight-10) + uint(10-lpnWeight)

// lpnRowChunk is the number of code rows whose indices are drawn at once.
const lpnRowChunk = 1024

// lpnKey keys the AES-CTR stream that draws the code's row indices: the
// code is public and fixed, like Ferret's.
var lpnKey = fixedCipher("rosemary/hempc/ot.lpn")

// lpnEncode adds to out[j] the XOR of the lpnWeight entries of secret that
// row j of the local linear code selects, and likewise to bitsOut[j] from
// bits when bits is not nil (the receiver's choice bits).
func lpnEncode(p ferretParams, secret, out []block, bits, bitsOut []uint8) {
	if len(secret) < p.k || len(out) < p.n {
		// The assembly gather reads secret at indices below p.k unchecked.
		panic(fmt.Sprintf("ot: LPN encoding of %d rows from %d entries, want %d and %d", len(out), len(secret), p.n, p.k))
	}
	chunks := (p.n + lpnRowChunk - 1) / lpnRowChunk
	inParallel(chunks, func(lo, hi int) {
		stream := make([]byte, 4*lpnWeight*lpnRowChunk)
		idx := make([]int32, lpnWeight*lpnRowChunk)
		var iv [16]byte
		k := uint64(p.k)
		for c := lo; c < hi; c++ {
			binary.LittleEndian.PutUint64(iv[:], uint64(p.k))
			binary.LittleEndian.PutUint64(iv[8:], uint64(c)<<32)
			clear(stream)
			cipher.NewCTR(lpnKey, iv[:]).XORKeyStream(stream, stream)
			rows := min(lpnRowChunk, p.n-c*lpnRowChunk)
			// The chunk's indices first, then the gathers: the loads of
			// one row are independent and the loop has no decoding in it.
			for i := range idx[:rows*lpnWeight] {
				idx[i] = int32(uint64(binary.LittleEndian.Uint32(stream[4*i:])) * k >> 32)
			}
			dst := out[c*lpnRowChunk : c*lpnRowChunk+rows]
			if useAsmGather { // amd64: the gather with prefetching
				lpnGatherAsm(&secret[0], &idx[0], &dst[0], rows)
			} else {
				lpnGather(secret, idx, dst)
			}
			if bits != nil {
				bdst := bitsOut[c*lpnRowChunk : c*lpnRowChunk+rows]
				for r := range bdst {
					ix := idx[r*lpnWeight : r*lpnWeight+lpnWeight : r*lpnWeight+lpnWeight]
					bdst[r] ^= bits[ix[0]] ^ bits[ix[1]] ^ bits[ix[2]] ^ bits[ix[3]] ^ bits[ix[4]] ^
						bits[ix[5]] ^ bits[ix[6]] ^ bits[ix[7]] ^ bits[ix[8]] ^ bits[ix[9]]
				}
			}
		}
	})
}

// lpnGather sets dst[r] ^= the XOR of the lpnWeight entries of secret that
// idx lists for row r (lpnGatherAsm's definition, and its test's reference).
func lpnGather(secret []block, idx []int32, dst []block) {
	for r := range dst {
		ix := idx[r*lpnWeight : r*lpnWeight+lpnWeight : r*lpnWeight+lpnWeight]
		a := secret[ix[0]]
		b := secret[ix[1]]
		a[0] ^= b[0] ^ secret[ix[2]][0] ^ secret[ix[3]][0] ^ secret[ix[4]][0] ^ secret[ix[5]][0] ^
			secret[ix[6]][0] ^ secret[ix[7]][0] ^ secret[ix[8]][0] ^ secret[ix[9]][0]
		a[1] ^= b[1] ^ secret[ix[2]][1] ^ secret[ix[3]][1] ^ secret[ix[4]][1] ^ secret[ix[5]][1] ^
			secret[ix[6]][1] ^ secret[ix[7]][1] ^ secret[ix[8]][1] ^ secret[ix[9]][1]
		dst[r] = dst[r].xor(a)
	}
}
