// Package fhe is Rosemary's scheme layer: named parameter presets taken from
// the papers (each with its source beside it), checked against the
// homomorphic-encryption standard's 128-bit security bounds, and turned into
// Lattigo v6 CKKS or BGV parameters. Everything a scheme needs beyond
// parameters — keys, encoders, evaluators — is Lattigo's.
package fhe
