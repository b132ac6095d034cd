package ir

import (
	"fmt"
	"math/bits"
)

// ExpandSpec places the leaves of an Expand node in the expansion tree of
// its query ciphertext (the query expansion of Angel, Chen, Laine and
// Setty, "PIR with Compressed Queries and Amortized Query Processing",
// IEEE S&P 2018).
//
// A tree node at depth j holds a ciphertext c; its children are
// c + σ_j(c) (bit j of the coefficient index is 0) and
// (c − σ_j(c))·X^(−2^j) (bit 1), σ_j the automorphism X → X^(N/2^j + 1).
// The leaf at depth D reached through the bits of a coefficient index i
// encrypts 2^D times the query's coefficient i as a constant polynomial,
// provided no other nonzero coefficient agrees with i on those D bits.
//
// Instance k of the node is the leaf for coefficient index
// Prefix + 2^PrefixBits · bitrev(k) (bitrev over log2 Count bits): the
// first PrefixBits levels follow Prefix, the rest the bits of k from the
// most significant down, so consecutive instances share their path and
// the leaves can be produced in order, depth first, holding one path.
type ExpandSpec struct {
	Prefix     uint64 `json:"prefix"`
	PrefixBits int    `json:"prefix_bits"`
}

// Depth is the depth of the leaves of an Expand node with count leaves.
func (s ExpandSpec) Depth(count int64) int { return s.PrefixBits + bits.Len64(uint64(count)) - 1 }

// Branch is the branch (0 even, 1 odd) taken at depth j on the way to
// leaf k of an Expand node with count leaves.
func (s ExpandSpec) Branch(count, k int64, j int) int {
	if j < s.PrefixBits {
		return int(s.Prefix>>j) & 1
	}
	logCount := bits.Len64(uint64(count)) - 1
	return int(k>>(logCount-1-(j-s.PrefixBits))) & 1
}

// Coefficient is the query coefficient index leaf k stands for.
func (s ExpandSpec) Coefficient(count, k int64) uint64 {
	logCount := bits.Len64(uint64(count)) - 1
	rev := bits.Reverse64(uint64(k)) >> (64 - logCount)
	if logCount == 0 {
		rev = 0
	}
	return s.Prefix + rev<<s.PrefixBits
}

func (s ExpandSpec) check(count int64, logN int) error {
	if count < 1 || count&(count-1) != 0 {
		return fmt.Errorf("expand count %d is not a power of two", count)
	}
	if s.PrefixBits < 0 || s.PrefixBits > 63 || s.Prefix>>s.PrefixBits != 0 {
		return fmt.Errorf("expand prefix %d does not fit %d bits", s.Prefix, s.PrefixBits)
	}
	// σ_j must be X → X^(N/2^j + 1) with N/2^j ≥ 4, so that it is a slot
	// rotation (≡ 1 mod 4): depth ≤ logN − 1.
	if d := s.Depth(count); d < 1 || d > logN-1 {
		return fmt.Errorf("expand depth %d outside [1, %d]", d, logN-1)
	}
	return nil
}

// Expand expands the one-ciphertext query x into count leaves placed by
// spec (see ExpandSpec); every leaf is at x's level.
func (b *Builder) Expand(x int, count int64, spec ExpandSpec) int {
	id := b.add(Node{Op: OpExpand, Args: []int{x}, Level: b.node(x).Level, Degree: 1, Count: count})
	s := spec
	b.p.Nodes[id].Expand = &s
	return id
}
