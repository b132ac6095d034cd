// Package ir is the FHE program the Rosemary compiler works on: a DAG in
// topological order whose nodes are homomorphic operations carrying their
// parameter set and level, and whose edges are ciphertext dependencies.
//
// A node may stand for Count independent instances of the same operation
// (a database of 2^32 records is one Stored node, not 2^32). Instance i of a
// node uses instance i mod c of an argument with count c, so c must divide
// the node's count: c equal is element-wise, c = 1 a broadcast. Sum folds
// consecutive groups of its argument's instances into Count results with
// HAdds. Sizes in bytes depend on the word size of the machine
// that holds them, so they are computed on demand (Bytes) rather than stored.
//
// Two annotations change no semantics. Segment hints (Builder.Segment) mark
// nodes as part of a linear or non-linear program segment, the manual
// allocation the compiler's Bare baseline follows. Compact stored plaintexts
// (Builder.StoredCompact, BGV only) are kept as their coefficients modulo t,
// one limb whatever their level; they may only be the plaintext operand of a
// PMult, which lifts them.
package ir
