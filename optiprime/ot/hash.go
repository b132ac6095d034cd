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
// Only the GGM trees use π. The pads and keys of derived OTs stay SHA-256
// (crh, nPad): measured here, a fixed-key-AES TCCR hash (two π calls) cost
// the same as one SHA-256 of 32 bytes (106 vs 110 ns) and Naor–Pinkas masks
// from four Even–Mansour PRF calls cost more than one SHA-256 of 80 bytes
// (238 vs ≈ 140 ns): Go's AES encrypts one block per call (≈ 37 ns here),
// so AES-NI's pipelining is lost.
type hasher struct{ buf, buf2, buf3, buf4 [32]byte }

func (h *hasher) pi(c cipher.Block, x block) block {
	x.put(h.buf[:16])
	c.Encrypt(h.buf[16:], h.buf[:16])
	return getBlock(h.buf[16:])
}
