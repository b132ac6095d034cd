package lwepir

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// PackingKeys are a query's key-switching keys for packing, under the
// query's own LWE secret s: for each level k = 1…log N of the packing tree
// and digit j, the b-part
//
//	K0[k][j] = K1[k][j]·s + e − B^j·τ_k(s)   (mod Q, NTT form)
//
// of a key switching from τ_k(s) to s, τ_k: X → X^(2^k+1). The a-parts
// K1 are public, expanded from the database's seed (packingKeyA): every
// query shares them, which is what lets the server precompute the
// a-dependent half of packing (Packer). They are sent with each query:
// s is fresh a query (the public matrix A is fixed, so a reused s would
// show the difference of two queries' unit vectors).
type PackingKeys struct {
	// B holds log N · Digits polynomials of N coefficients below Q, NTT
	// form, level-major (packRing.keyIndex).
	B [][]uint64
	// sent, where genPackingKeys made the keys, holds each polynomial's
	// words as MarshalPackingKeys sends them (coefficient domain, trimmed),
	// so that encoding needs no inverse transform.
	sent [][]uint64
}

// packingKeyA expands the public a-parts K1 of the packing keys from the
// database seed: AES-256 in counter mode keyed by a hash of the seed
// (domain-separated from the public matrix A, which is keyed by the seed
// itself), 64-bit words cut to Q's bit length and rejected at or above Q.
// Uniform in the NTT domain is uniform: the NTT is a bijection.
func packingKeyA(pr *packRing, seed [SeedSize]byte) [][]uint64 {
	key := sha256.Sum256(append([]byte("rosemary lwepir packing key a-parts\x00"), seed[:]...))
	c, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	var iv [aes.BlockSize]byte
	stream := cipher.NewCTR(c, iv[:])
	n := pr.r.N()
	mask := uint64(1)<<bits.Len64(pr.q) - 1
	buf := make([]byte, 8*n)
	out := make([][]uint64, pr.keyPolys())
	for i := range out {
		out[i] = make([]uint64, n)
		for filled := 0; filled < n; {
			clear(buf)
			stream.XORKeyStream(buf, buf)
			for w := 0; w < len(buf) && filled < n; w += 8 {
				if v := binary.LittleEndian.Uint64(buf[w:]) & mask; v < pr.q {
					out[i][filled] = v
					filled++
				}
			}
		}
	}
	return out
}

// genPackingKeys makes the packing keys of secret s (N ternary
// coefficients) against the public a-parts ka. The errors come from
// sampleError (crypto/rand, constant time); s enters the ring without a
// branch on its signs.
func genPackingKeys(p Params, pr *packRing, ka [][]uint64, s []int64) (*PackingKeys, error) {
	r, q, n := pr.r, pr.q, pr.r.N()
	sNTT := r.NewPoly()
	for i, x := range s {
		sNTT.Coeffs[0][i] = uint64(x) + q&uint64(x>>63)
	}
	r.NTT(sNTT, sNTT)
	ts, k0 := r.NewPoly(), r.NewPoly()
	errs := make([]int64, n*pr.keyPolys())
	if err := sampleError(errs, p.Eta); err != nil {
		return nil, err
	}
	keys := &PackingKeys{B: make([][]uint64, pr.keyPolys()), sent: make([][]uint64, pr.keyPolys())}
	for k := 1; k <= pr.keyLevels(); k++ {
		r.AutomorphismNTTWithIndex(sNTT, pr.keyAuto(k), ts)
		d := pr.keyDrop(k)
		for j := 0; j < pr.pp.Digits; j++ {
			i := pr.keyIndex(k, j)
			// K1·s − B^j·τ(s) in the NTT domain, then the error added in
			// the coefficient domain, where the key is trimmed as sent
			// (the low d bits replaced by 2^(d−1)).
			copy(k0.Coeffs[0], ka[i])
			r.MulCoeffsBarrett(k0, sNTT, k0)
			r.MulScalarThenSub(ts, ring.ModExp(2, uint64(pr.pp.DropBits+j*pr.pp.LogBase), q), k0)
			r.INTT(k0, k0)
			sent := make([]uint64, n)
			for c, x := range errs[i*n : (i+1)*n] {
				y := k0.Coeffs[0][c] + uint64(x) + q&uint64(x>>63) // < 2q
				if y >= q {
					y -= q
				}
				sent[c] = y >> d
				k0.Coeffs[0][c] = pr.untrim(sent[c], d)
			}
			r.NTT(k0, k0)
			keys.B[i] = append([]uint64(nil), k0.Coeffs[0]...)
			keys.sent[i] = sent
		}
	}
	clear(errs)
	return keys, nil
}

// untrim is the key coefficient a trimmed word w stands for:
// w·2^d + 2^(d−1) mod Q (the middle of the dropped range, so the added
// error is centred).
func (pr *packRing) untrim(w uint64, d int) uint64 {
	x := w<<d + 1<<d>>1
	if x >= pr.q {
		x -= pr.q
	}
	return x
}

// trim is untrim's inverse: the word a key coefficient is sent as, or
// false for a coefficient untrim cannot give.
func (pr *packRing) trim(x uint64, d int) (uint64, bool) {
	t := x + pr.q - 1<<d>>1
	if t >= pr.q {
		t -= pr.q
	}
	if t&(1<<d-1) != 0 {
		return 0, false
	}
	return t >> d, true
}

// keyWidth is the bits a level-k key coefficient is sent in.
func (pr *packRing) keyWidth(k int) int { return bits.Len64((pr.q - 1) >> pr.keyDrop(k)) }

// PackingKeysBytes is the size of a query's encoded packing keys.
func PackingKeysBytes(p Params) int {
	pr, err := p.packRing()
	if err != nil {
		return 0
	}
	var size int
	for k := 1; k <= pr.keyLevels(); k++ {
		size += pr.pp.Digits * packedLen(pr.r.N(), pr.keyWidth(k))
	}
	return size
}

// MarshalPackingKeys encodes keys: each polynomial in the coefficient
// domain, level k's coefficients without their low keyDrop(k) bits (which
// genPackingKeys set to the middle of their range), in as many bits as the
// rest of Q needs, least significant bit first, level-major.
func MarshalPackingKeys(p Params, keys *PackingKeys) ([]byte, error) {
	pr, err := p.packRing()
	if err != nil {
		return nil, err
	}
	if err := pr.checkKeys(keys); err != nil {
		return nil, err
	}
	r := pr.r
	poly := r.NewPoly()
	words := make([]uint64, r.N())
	out := make([]byte, 0, PackingKeysBytes(p))
	for k := 1; k <= pr.keyLevels(); k++ {
		d := pr.keyDrop(k)
		for j := 0; j < pr.pp.Digits; j++ {
			if keys.sent != nil {
				// Made here: the words as sent are kept.
				out = packBits(out, keys.sent[pr.keyIndex(k, j)], pr.keyWidth(k))
				continue
			}
			copy(poly.Coeffs[0], keys.B[pr.keyIndex(k, j)])
			r.INTT(poly, poly)
			for c, x := range poly.Coeffs[0] {
				w, ok := pr.trim(x, d)
				if !ok {
					return nil, fmt.Errorf("%w: packing keys not trimmed as sent", ErrParams)
				}
				words[c] = w
			}
			// N·width is a multiple of 8 for N ≥ 8: each polynomial
			// packed on its own is the packing of the whole.
			out = packBits(out, words, pr.keyWidth(k))
		}
	}
	return out, nil
}

// UnmarshalPackingKeys decodes a query's packing keys, refusing any input
// not exactly PackingKeysBytes long and any coefficient that would not lie
// below Q: the bytes come from a client.
func UnmarshalPackingKeys(p Params, b []byte) (*PackingKeys, error) {
	pr, err := p.packRing()
	if err != nil {
		return nil, err
	}
	if len(b) != PackingKeysBytes(p) {
		return nil, fmt.Errorf("%w: packing keys of %d bytes, want %d", ErrParams, len(b), PackingKeysBytes(p))
	}
	r, n := pr.r, pr.r.N()
	poly := r.NewPoly()
	words := make([]uint64, n)
	keys := &PackingKeys{B: make([][]uint64, pr.keyPolys())}
	for k := 1; k <= pr.keyLevels(); k++ {
		d, w := pr.keyDrop(k), pr.keyWidth(k)
		l := packedLen(n, w)
		for j := 0; j < pr.pp.Digits; j++ {
			if err := unpackBits(b[:l], words, w, (pr.q-1)>>d+1, "packing keys"); err != nil {
				return nil, err
			}
			b = b[l:]
			for c, x := range words {
				poly.Coeffs[0][c] = pr.untrim(x, d)
			}
			r.NTT(poly, poly)
			keys.B[pr.keyIndex(k, j)] = append([]uint64(nil), poly.Coeffs[0]...)
		}
	}
	return keys, nil
}

// checkKeys verifies keys have the shape of pr's (any values below Q are
// keys: a wrong key only spoils its own query's answer).
func (pr *packRing) checkKeys(keys *PackingKeys) error {
	if keys == nil || len(keys.B) != pr.keyPolys() {
		return fmt.Errorf("%w: packing keys of the wrong shape", ErrParams)
	}
	for _, b := range keys.B {
		if len(b) != pr.r.N() {
			return fmt.Errorf("%w: packing keys of the wrong shape", ErrParams)
		}
		for _, v := range b {
			if v >= pr.q {
				return fmt.Errorf("%w: packing key coefficient not below Q", ErrParams)
			}
		}
	}
	return nil
}
