package lwepir

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Samplers draw from crypto/rand (the error through a DRBG keyed from it)
// and run in time independent of the values drawn: centred binomials are
// differences of popcounts of random words.

// sampleTernary fills s with a centred binomial of parameter 1: values in
// {-1, 0, 1} with probabilities 1/4, 1/2, 1/4.
func sampleTernary(s []int64) error {
	buf := make([]byte, (len(s)+3)/4)
	if _, err := rand.Read(buf); err != nil {
		return fmt.Errorf("lwepir: reading randomness: %w", err)
	}
	for i := range s {
		b := buf[i/4] >> (2 * (i % 4))
		s[i] = int64(b&1) - int64(b>>1&1)
	}
	return nil
}

// sampleError fills e with a centred binomial of parameter eta ≤ 128
// (variance eta/2): the popcount of eta random bits minus that of eta more.
// A query's error takes 32 random bytes per column (16 MB for a 4 GiB
// database), more than crypto/rand's system calls deliver quickly (they
// were most of a query's client time), so the bits come from AES-256 in
// counter mode under a fresh key from crypto/rand: a CTR-DRBG (NIST SP
// 800-90A) without reseeding, which one query's 2^20 blocks never need.
func sampleError(e []int64, eta int) error {
	const words = 4 // 256 bits: two halves of up to 128 bits each
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return fmt.Errorf("lwepir: reading randomness: %w", err)
	}
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return err
	}
	var iv [aes.BlockSize]byte
	stream := cipher.NewCTR(block, iv[:])
	buf := make([]byte, 8*words*min(len(e), 4096))
	for start := 0; start < len(e); start += 4096 {
		chunk := e[start:min(len(e), start+4096)]
		clear(buf)
		stream.XORKeyStream(buf[:8*words*len(chunk)], buf[:8*words*len(chunk)])
		loMask, hiMask := halfMasks(eta)
		for i := range chunk {
			w := buf[8*words*i:]
			a := bits.OnesCount64(binary.LittleEndian.Uint64(w)&loMask) + bits.OnesCount64(binary.LittleEndian.Uint64(w[8:])&hiMask)
			b := bits.OnesCount64(binary.LittleEndian.Uint64(w[16:])&loMask) + bits.OnesCount64(binary.LittleEndian.Uint64(w[24:])&hiMask)
			chunk[i] = int64(a - b)
		}
	}
	return nil
}

// halfMasks selects eta bits out of two 64-bit words.
func halfMasks(eta int) (lo, hi uint64) {
	if eta >= 64 {
		return ^uint64(0), uint64(1)<<(eta-64) - 1
	}
	return uint64(1)<<eta - 1, 0
}

// SeedSize is the size of the seed of the public matrix.
const SeedSize = 32

// publicBlock writes block k of the public matrix A: the N coefficients of the
// polynomial a_k, uniform modulo 2^32 (returned centred in [-2^31, 2^31)),
// drawn from AES-256 in counter mode keyed by the seed, block k starting at
// counter k·N/4. Anyone with the seed derives the same matrix.
func publicBlock(seed [SeedSize]byte, k int, a []int64) {
	c, err := aes.NewCipher(seed[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[8:], uint64(k)*uint64(len(a))/4)
	buf := make([]byte, 4*len(a))
	cipher.NewCTR(c, iv[:]).XORKeyStream(buf, buf)
	for i := range a {
		a[i] = int64(int32(binary.LittleEndian.Uint32(buf[4*i:])))
	}
}
