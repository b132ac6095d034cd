package ot

import (
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// lpnEncode's gathers are written out for 10 nonzeros per row.
const _ = uint(lpnWeight-10) + uint(10-lpnWeight)

// lpnRowChunk is the number of code rows whose indices are drawn at once.
const lpnRowChunk = 1024

// lpnKey keys the AES-CTR stream that draws the code's row indices: the
// code is public and fixed, like Ferret's. lpnRK is its expanded key, for
// the assembly gather that encrypts the next chunk's stream.
var (
	lpnKey = fixedCipher(lpnLabel)
	lpnRK  = func() (rk [176]byte) {
		k := sha256.Sum256([]byte(lpnLabel)) // fixedCipher's key
		expandKey128(k[:16], &rk)
		return
	}()
)

const lpnLabel = "rosemary/hempc/ot.lpn"

// lpnStreamBytes is the stream of a whole chunk: 4 bytes an index.
const lpnStreamBytes = 4 * lpnWeight * lpnRowChunk

// lpnIV is the IV of chunk c's stream: k, then c<<32, little-endian.
func lpnIV(p ferretParams, c int) (iv [16]byte) {
	binary.LittleEndian.PutUint64(iv[:], uint64(p.k))
	binary.LittleEndian.PutUint64(iv[8:], uint64(c)<<32)
	return iv
}

// lpnCounter is the low half of chunk c's IV read big-endian, where CTR
// counts (read so, c<<32 is below 2^32: a chunk's 2,560 blocks never carry
// into the high half, which the assembly keeps fixed).
func lpnCounter(p ferretParams, c int) uint64 {
	iv := lpnIV(p, c)
	return binary.BigEndian.Uint64(iv[8:])
}

// lpnStream fills u with the AES-CTR stream of chunk c: the indices of the
// chunk's rows, 4 bytes each, before lpnIndices decodes them.
func lpnStream(p ferretParams, c int, u []byte) {
	iv := lpnIV(p, c)
	clear(u)
	cipher.NewCTR(lpnKey, iv[:]).XORKeyStream(u, u)
}

// lpnIndices decodes a stream into indices below k (a word times k, over
// 2^32).
func lpnIndices(u []byte, k int, idx []int32) {
	for i := range idx {
		idx[i] = int32(uint64(binary.LittleEndian.Uint32(u[4*i:])) * uint64(k) >> 32)
	}
}

// lpnEncode adds to out[j] the XOR of the lpnWeight entries of secret that
// row j of the local linear code selects, and likewise to bitsOut[j] from
// bits when bits is not nil (the receiver's choice bits).
func lpnEncode(p ferretParams, secret, out []block, bits, bitsOut []uint8) {
	if len(secret) < p.k || len(out) < p.n || bits != nil && (len(bits) < p.k || len(bitsOut) < p.n) {
		// The assembly gather reads secret and bits at indices below p.k
		// unchecked.
		panic(fmt.Sprintf("ot: LPN encoding of %d rows from %d entries, want %d and %d", len(out), len(secret), p.n, p.k))
	}
	chunks := (p.n + lpnRowChunk - 1) / lpnRowChunk
	rowsOf := func(c int) int { return min(lpnRowChunk, p.n-c*lpnRowChunk) }
	inParallel(chunks, func(lo, hi int) {
		if !useAsmGather {
			lpnEncodeGo(p, secret, out, bits, bitsOut, lo, hi)
			return
		}
		// Two stream buffers: the gather of chunk c encrypts chunk c+1's
		// stream into the other (48 bytes of slack for its whole triples).
		cur, next := make([]byte, lpnStreamBytes+48), make([]byte, lpnStreamBytes+48)
		lpnStream(p, lo, cur[:4*lpnWeight*rowsOf(lo)])
		for c := lo; c < hi; c++ {
			rows := rowsOf(c)
			dst := out[c*lpnRowChunk : c*lpnRowChunk+rows]
			var b, bo *uint8
			if bits != nil {
				b, bo = &bits[0], &bitsOut[c*lpnRowChunk]
			}
			blocks := 0
			if c+1 < hi && useAESNI {
				blocks = (4*lpnWeight*rowsOf(c+1) + 15) / 16
			}
			lpnGatherAsm(&secret[0], &cur[0], uint64(p.k), &dst[0], rows, b, bo, &lpnRK, &next[0], blocks, lpnCounter(p, c+1))
			if c+1 < hi && !useAESNI {
				lpnStream(p, c+1, next[:4*lpnWeight*rowsOf(c+1)])
			}
			cur, next = next, cur
		}
	})
}

// lpnEncodeGo is lpnEncode's pure-Go path over chunks [lo, hi).
func lpnEncodeGo(p ferretParams, secret, out []block, bits, bitsOut []uint8, lo, hi int) {
	stream := make([]byte, lpnStreamBytes)
	idx := make([]int32, lpnWeight*lpnRowChunk)
	for c := lo; c < hi; c++ {
		rows := min(lpnRowChunk, p.n-c*lpnRowChunk)
		u := stream[:4*lpnWeight*rows]
		lpnStream(p, c, u)
		ix := idx[:lpnWeight*rows]
		lpnIndices(u, p.k, ix)
		lpnGather(secret, ix, out[c*lpnRowChunk:c*lpnRowChunk+rows])
		if bits != nil {
			lpnGatherBits(bits, ix, bitsOut[c*lpnRowChunk:c*lpnRowChunk+rows])
		}
	}
}

// lpnGather sets dst[r] ^= the XOR of the lpnWeight entries of secret that
// idx lists for row r (with lpnIndices, lpnGatherAsm's definition and its
// test's reference).
func lpnGather(secret []block, idx []int32, dst []block) {
	for r := range dst {
		ix := idx[r*lpnWeight : r*lpnWeight+lpnWeight : r*lpnWeight+lpnWeight]
		a := secret[ix[0]]
		b := secret[ix[1]]
		a[0] ^= b[0] ^ secret[ix[2]][0] ^ secret[ix[3]][0] ^ secret[ix[4]][0] ^ secret[ix[5]][0] ^
			secret[ix[6]][0] ^ secret[ix[7]][0] ^ secret[ix[8]][0] ^ secret[ix[9]][0]
		a[1] ^= b[1] ^ secret[ix[2]][1] ^ secret[ix[3]][1] ^ secret[ix[4]][1] ^ secret[ix[5]][1] ^
			secret[ix[6]][1] ^ secret[ix[7]][1] ^ secret[ix[8]][1] ^ secret[ix[9]][1]
		dst[r] = dst[r].xor(a)
	}
}

// lpnGatherBits is lpnGather over the receiver's choice bits.
func lpnGatherBits(bits []uint8, idx []int32, dst []uint8) {
	for r := range dst {
		ix := idx[r*lpnWeight : r*lpnWeight+lpnWeight : r*lpnWeight+lpnWeight]
		dst[r] ^= bits[ix[0]] ^ bits[ix[1]] ^ bits[ix[2]] ^ bits[ix[3]] ^ bits[ix[4]] ^
			bits[ix[5]] ^ bits[ix[6]] ^ bits[ix[7]] ^ bits[ix[8]] ^ bits[ix[9]]
	}
}
