package ot

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
