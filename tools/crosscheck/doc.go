// Package crosscheck proves, operation by operation, that Rosemary's verified
// core computes what Lattigo computes: it lowers each homomorphic operation
// to an mProgram (compiler), runs it on the interpreter (engine) with
// Lattigo's own inputs and keys, and requires the output ciphertext to be
// bit-identical to Lattigo's evaluator output and to decrypt to the
// plaintext reference.
package crosscheck
