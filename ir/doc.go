// Package ir is the FHE program the Rosemary compiler works on: a DAG in
// topological order whose nodes are homomorphic operations carrying their
// parameter set and level, and whose edges are ciphertext dependencies.
//
// A node may stand for Count independent instances of the same operation
// (a database of 2^32 records is one Stored node, not 2^32). An argument is
// consumed element-wise when its count equals the node's and broadcast when
// its count is 1; Sum folds the instances of its argument into Count
// results with HAdds. Sizes in bytes depend on the word size of the machine
// that holds them, so they are computed on demand (Bytes) rather than stored.
package ir
