package ot

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
)

// fixedAES is AES-128 under a fixed public key, applied to many blocks per
// call. Go's cipher.Block encrypts one block per call, so a chain of calls
// waits on each block's ten dependent rounds; the amd64 kernel
// (encryptBlocksAsm) keeps eight independent blocks in flight, which is
// where AES-NI's throughput is. Elsewhere, and on a CPU without AES-NI,
// the blocks go through crypto/aes one at a time (same outputs).
type fixedAES struct {
	rk [11 * 16]byte // the expanded key, FIPS 197 byte order
	c  cipher.Block
}

// newFixedAES keys AES-128 with the first 16 bytes of SHA-256(label): a
// permutation π modelled as an ideal cipher, the same for every party.
func newFixedAES(label string) *fixedAES {
	k := sha256.Sum256([]byte(label))
	c, err := aes.NewCipher(k[:16])
	if err != nil {
		panic(err) // a 16-byte key is always valid
	}
	f := &fixedAES{c: c}
	expandKey128(k[:16], &f.rk)
	return f
}

// encrypt sets dst[j] = π(src[j]) (dst and src may be the same slice, not
// otherwise overlapping); len(dst) ≥ len(src). A block's bytes are its two
// words little-endian (block.put).
func (f *fixedAES) encrypt(dst, src []block) {
	if len(src) == 0 {
		return
	}
	if useAESNI {
		encryptBlocksAsm(&f.rk, &dst[0], &src[0], len(src))
		return
	}
	var buf [32]byte
	for j, x := range src {
		x.put(buf[:16])
		f.c.Encrypt(buf[16:], buf[:16])
		dst[j] = getBlock(buf[16:])
	}
}

// expandKey128 is FIPS 197's key expansion for a 128-bit key (Nk = 4,
// Nr = 10): 44 words, four per round key. The kernel needs the round keys,
// which crypto/aes keeps to itself.
func expandKey128(key []byte, rk *[176]byte) {
	copy(rk[:16], key)
	rcon := byte(1)
	for i := 4; i < 44; i++ {
		var w [4]byte
		copy(w[:], rk[4*(i-1):4*i])
		if i%4 == 0 {
			w = [4]byte{sbox[w[1]] ^ rcon, sbox[w[2]], sbox[w[3]], sbox[w[0]]} // SubWord(RotWord(w)) ⊕ Rcon
			rcon = gfMul(rcon, 2)
		}
		for b := range w {
			rk[4*i+b] = rk[4*(i-4)+b] ^ w[b]
		}
	}
}

// sbox is AES's S-box, derived as FIPS 197 §5.1.1 defines it (the
// multiplicative inverse in GF(2^8) followed by the affine map) rather
// than typed in; the package's tests check the expansion against
// crypto/aes.
var sbox = func() (s [256]byte) {
	for x := 0; x < 256; x++ {
		inv := byte(0)
		if x != 0 {
			inv = gfPow(byte(x), 254) // x^254 = x^{-1}
		}
		b := inv
		s[x] = b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^ rotl8(b, 4) ^ 0x63
	}
	return
}()

func rotl8(b byte, n uint) byte { return b<<n | b>>(8-n) }

// gfMul multiplies in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
func gfMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

func gfPow(a byte, e int) byte {
	r := byte(1)
	for ; e > 0; e >>= 1 {
		if e&1 != 0 {
			r = gfMul(r, a)
		}
		a = gfMul(a, a)
	}
	return r
}

// tccrChunk is the number of blocks hashed per pass: both passes' blocks
// stay in L1.
const tccrChunk = 256

// crhCipher is the permutation of the derived OTs' hash (crhBlocks).
var crhCipher = newFixedAES("rosemary/hempc/ot.tccr")

// crhBlocks sets out[j] = H(first + j, x[j] ⊕ d), where H is the tweakable
// correlation-robust hash H(i, x) = π(π(x) ⊕ i) ⊕ π(x) with π fixed-key
// AES-128 and the tweak i the OT's global index (as a block (i, 0)).
//
// Why this hash. The OTs derived from a correlated OT (IKNP's or Ferret's:
// the receiver holds t_j = q_j ⊕ c_j·Δ) mask the sender's messages with H(j,
// q_j) and H(j, q_j ⊕ Δ); the receiver knows one of the two inputs, and the
// other differs from it by the secret Δ shared by every OT. Guo, Katz, Wang,
// Weng and Yu ("Efficient and Secure Multiparty Computation from Fixed-Key
// Block Ciphers", IEEE S&P 2020; ePrint 2019/074) prove this H tweakable
// correlation robust in the random-permutation model — {H(i, x_i ⊕ Δ)} is
// indistinguishable from random to anyone who chooses the (x_i, i) with
// distinct tweaks, for uniform secret Δ — and show that this is what
// semi-honest OT extension needs of its hash, with the OT index as the tweak
// (emp-tool, under Ferret's implementation, has the same construction). The
// global index here never repeats within one direction's OTs (every OT takes
// the next one), and the two directions' OTs have independent Δs.
//
// The former hash, SHA-256(label ‖ j ‖ x) in the random-oracle model, cost ≈
// 100 ns per call here; this costs two AES calls, pipelined eight blocks at
// a time.
//
// tmp holds scratch of at least min(len(x), tccrChunk) blocks.
func crhBlocks(first uint64, x []block, d block, out, tmp []block) {
	for lo := 0; lo < len(x); lo += tccrChunk {
		hi := min(lo+tccrChunk, len(x))
		o, t := out[lo:hi], tmp[:hi-lo]
		for j := range t {
			t[j] = x[lo+j].xor(d)
		}
		crhCipher.encrypt(o, t) // π(x)
		for j := range t {
			t[j] = block{o[j][0] ^ (first + uint64(lo+j)), o[j][1]}
		}
		crhCipher.encrypt(t, t) // π(π(x) ⊕ i)
		for j := range o {
			o[j] = o[j].xor(t[j])
		}
	}
}

// crhOne is crhBlocks for a single block.
func crhOne(i uint64, x block) block {
	var out, tmp [1]block
	crhBlocks(i, []block{x}, block{}, out[:], tmp[:])
	return out[0]
}

func (b block) lo64() uint64 { return b[0] }

func blockKey(b block) Key {
	var k Key
	binary.LittleEndian.PutUint64(k[:8], b[0])
	binary.LittleEndian.PutUint64(k[8:], b[1])
	return k
}
