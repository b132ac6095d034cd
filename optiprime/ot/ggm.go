package ot

import (
	"crypto/cipher"
	"encoding/binary"
)

// The GGM trees of the single-point COTs double each node x into
// (π0(x) ⊕ x, π1(x) ⊕ x), π_b AES-128 under a fixed public key: the
// Matyas–Meyer–Oseas length-doubling PRG that Ferret's implementation uses,
// secure when AES is modelled as an ideal cipher (Guo, Katz, Wang, Weng, Yu,
// "Efficient and Secure Multiparty Computation from Fixed-Key Block
// Ciphers", IEEE S&P 2020). A fixed key keeps the key schedule out of the
// inner loop (one per node otherwise).
var ggmCipher = [2]cipher.Block{fixedCipher("RMGGM0"), fixedCipher("RMGGM1")}

func (h *hasher) ggmChildren(x block) (c0, c1 block) {
	// Two scratch blocks: the two encryptions do not wait on each other's
	// stores and loads.
	x.put(h.buf[:16])
	x.put(h.buf2[:16])
	ggmCipher[0].Encrypt(h.buf[16:], h.buf[:16])
	ggmCipher[1].Encrypt(h.buf2[16:], h.buf2[:16])
	return getBlock(h.buf[16:]).xor(x), getBlock(h.buf2[16:]).xor(x)
}

// ggmLevel replaces nodes 0..2^l−1 by their children (node j's at 2j,
// 2j+1) and returns the XOR of the left and of the right children. Two
// nodes at a time, on four scratch blocks, so that four encryptions are in
// flight.
func (h *hasher) ggmLevel(tree []block, l int) (s0, s1 block) {
	j := 1<<l - 1
	for ; j >= 1; j -= 2 { // downwards: 2j, 2j+1 (and 2j−2, 2j−1) are read before written
		x, y := tree[j], tree[j-1]
		x.put(h.buf[:16])
		x.put(h.buf2[:16])
		y.put(h.buf3[:16])
		y.put(h.buf4[:16])
		ggmCipher[0].Encrypt(h.buf[16:], h.buf[:16])
		ggmCipher[1].Encrypt(h.buf2[16:], h.buf2[:16])
		ggmCipher[0].Encrypt(h.buf3[16:], h.buf3[:16])
		ggmCipher[1].Encrypt(h.buf4[16:], h.buf4[:16])
		x0, x1 := getBlock(h.buf[16:]).xor(x), getBlock(h.buf2[16:]).xor(x)
		y0, y1 := getBlock(h.buf3[16:]).xor(y), getBlock(h.buf4[16:]).xor(y)
		tree[2*j], tree[2*j+1] = x0, x1
		tree[2*j-2], tree[2*j-1] = y0, y1
		s0, s1 = s0.xor(x0).xor(y0), s1.xor(x1).xor(y1)
	}
	if j == 0 { // l = 0: the root alone
		c0, c1 := h.ggmChildren(tree[0])
		tree[0], tree[1] = c0, c1
		s0, s1 = s0.xor(c0), s1.xor(c1)
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
