package ot

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
)

// fixedCipher returns AES-128 under a fixed public key derived from label:
// a permutation π modelled as an ideal cipher.
func fixedCipher(label string) cipher.Block {
	k := sha256.Sum256([]byte(label))
	c, err := aes.NewCipher(k[:16])
	if err != nil {
		panic(err) // a 16-byte key is always valid
	}
	return c
}

// hasher holds a goroutine's scratch for the GGM levels (ggmLevel): a
// chunk of parents and their two encryptions.
//
// The GGM trees and the derived OTs' hash (crhBlocks) run π many blocks
// per call (fixedAES): one AES call per block through cipher.Block cost
// ≈ 37 ns here and left AES-NI's pipelining unused, so a two-call hash was
// no cheaper than SHA-256 (106 vs 110 ns); with eight blocks in flight a
// block costs ≈ 2–3 ns and the hash ≈ 12 ns.
type hasher struct{ par, c0, c1 [ggmChunk]block }
