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

// hasher holds the scratch block that π reads and writes, so that calls
// through the cipher.Block interface do not allocate; one per goroutine.
//
// The derived OTs' pads and keys use π too, through fixedAES (aes.go): one
// AES call per block through cipher.Block cost ≈ 37 ns here, so a
// two-call hash was no cheaper than SHA-256 (106 vs 110 ns); many blocks
// per call with eight in flight cost ≈ 2–3 ns a block, and the hash
// ≈ 12 ns.
type hasher struct{ buf, buf2, buf3, buf4 [32]byte }

func (h *hasher) pi(c cipher.Block, x block) block {
	x.put(h.buf[:16])
	c.Encrypt(h.buf[16:], h.buf[:16])
	return getBlock(h.buf[16:])
}
