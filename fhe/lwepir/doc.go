// Package lwepir is a hint-free, LWE-based single-server PIR: the default
// scheme of the device.
//
// The first dimension is SimplePIR's (Henzinger, Hong, Corrigan-Gibbs,
// Meiklejohn, Vaikuntanathan; USENIX Security 2023): the database is a byte
// matrix D of Rows×Cols entries, the query an LWE encryption
// q = A·s + e + Δ·u_col modulo 2^32, and the server's scan is the product D·q,
// one 32-bit multiply-add per database byte with no modular reduction and no
// NTT. That product is what reaches memory speed (package fhe/matvec).
//
// SimplePIR's client then needs the hint H = D·A, a download the size of a
// fraction of the database, again after every change. Here, as in HintlessPIR
// (Li, Micciancio, Raykova, Schultz-Wu; "Hintless Single-Server Private
// Information Retrieval", CRYPTO 2024), the server keeps H and computes H·s
// itself under a second, ring-based scheme: the client sends s encrypted in
// the slots of one BGV ciphertext and the server evaluates the Rows×N matrix
// H on it with the baby-step giant-step diagonal method. The diagonals are
// precomputed when the database is loaded (they are part of a generation,
// stored beside the data); a query needs two Galois keys, uploaded once per
// client. The public matrix A is made of negacyclic blocks of polynomials
// drawn from a seed, as in YPIR (Menon, Wu; USENIX Security 2024), so that H
// is computed with NTTs at load time rather than with Rows×Cols×N products.
//
// Parameters follow YPIR's first layer (N = 2048, q = 2^32, error of width
// 16.04, i.e. σ = 6.4, database entries of 8 bits) and, for the ring stage,
// the homomorphic encryption standard's table at 128-bit security
// (log QP ≤ 218 for ring degree 8192). Secrets and errors come from
// crypto/rand through constant-time centred binomial samplers.
//
// A client receives a whole column of Rows bytes: records are laid out so that
// each lies inside one column.
package lwepir
