package ot

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
)

// The hashes of this package are built on AES-128 under fixed public keys,
// a permutation π modelled as an ideal cipher, as emp-ot's are (Guo, Katz,
// Wang, Weng, Yu, "Efficient and Secure Multiparty Computation from
// Fixed-Key Block Ciphers", IEEE S&P 2020): with AES-NI a call costs tens of
// nanoseconds where SHA-256 of the same input costs hundreds, and the
// nonlinear layers hash tens of times per value. Each use has its own key.
var (
	crhCipher    = fixedCipher("RMCRH")    // pads and keys of derived OTs
	ferretCipher = fixedCipher("RMFERRET") // the trees' level-sum masks
	npCipher     = fixedCipher("RMNP")     // 1-out-of-N masks
)

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
type hasher struct{ buf [32]byte }

func (h *hasher) pi(c cipher.Block, x block) block {
	x.put(h.buf[:16])
	c.Encrypt(h.buf[16:], h.buf[:16])
	return getBlock(h.buf[16:])
}

// tccr is the tweakable circular correlation-robust hash of Guo et al.,
// H(i, x) = π(π(x) ⊕ i) ⊕ π(x), which IKNP's and Ferret's key derivations
// need (the sender hashes x and x ⊕ Δ for one secret Δ).
func (h *hasher) tccr(c cipher.Block, i uint64, x block) block {
	p := h.pi(c, x)
	return h.pi(c, p.xor(block{i, 0})).xor(p)
}

// crh is the hash of derived OTs: index j's pads and keys.
func (h *hasher) crh(j uint64, x block) block { return h.tccr(crhCipher, j, x) }

// prf is single-key Even–Mansour, F_K(t) = π(t ⊕ K) ⊕ K: a pseudorandom
// function of t under a uniform key K unknown to the caller (Dunkelman,
// Keller, Shamir, EUROCRYPT 2012), what Naor and Pinkas's 1-out-of-N OT
// asks of its masks.
func (h *hasher) prf(k Key, t block) block {
	kb := getBlock(k[:])
	return h.pi(npCipher, t.xor(kb)).xor(kb)
}

func pad64(b block) uint64 { return b[0] }

func toKey(b block) Key {
	var k Key
	b.put(k[:])
	return k
}
