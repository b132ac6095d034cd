// Package fhetest is test support only: it builds the Lattigo objects that
// tests of the compiler, the workloads and the other packages executing
// programs for real need again and again — CKKS parameters from a named
// fhe preset, a fresh secret key with its relinearisation key and the
// Galois keys asked for, an encoder, an encryptor and a decryptor — and
// encodes, encrypts, decrypts and decodes slot vectors, failing the test on
// any error.
//
// Keys are sampled by Lattigo's key generator, whose randomness comes from
// crypto/rand. The package imports no Rosemary package but fhe, so that any
// package's tests may use it; production code must not.
package fhetest
