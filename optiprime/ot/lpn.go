package ot

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// lpnEncode's gather is written out for 10 nonzeros per row.
const _ = uint(lpnWeight-10) + uint(10-lpnWeight)

// lpnRowChunk is the number of code rows whose indices are drawn from one
// AES-CTR stream (the chunk number is in its IV).
const lpnRowChunk = 1024

// lpnKey keys the AES-CTR stream that draws the code's row indices: the
// code is public and fixed, like Ferret's.
var lpnKey = fixedCipher("rosemary/hempc/ot.lpn")

// lpnDraw sets idx to the indices of the rows of chunk c, lpnWeight per
// row, below p.k; stream is scratch of 4 bytes per index.
func lpnDraw(p ferretParams, c int, stream []byte, idx []int32) {
	var iv [16]byte
	binary.LittleEndian.PutUint64(iv[:], uint64(p.k))
	binary.LittleEndian.PutUint64(iv[8:], uint64(c)<<32)
	stream = stream[:4*len(idx)]
	clear(stream)
	cipher.NewCTR(lpnKey, iv[:]).XORKeyStream(stream, stream)
	k := uint64(p.k)
	for i := range idx {
		idx[i] = int32(uint64(binary.LittleEndian.Uint32(stream[4*i:])) * k >> 32)
	}
}

// lpnEncode adds to out[j] the XOR of the lpnWeight entries of secret that
// row j of the local linear code selects, and likewise to bitsOut[j] from
// bits when bits is not nil (the receiver's choice bits).
func lpnEncode(p ferretParams, secret, out []block, bits, bitsOut []uint8) {
	if len(secret) < p.k || len(out) < p.n || bits != nil && (len(bits) < p.k || len(bitsOut) < p.n) {
		// The assembly gathers read secret at indices below p.k unchecked.
		panic(fmt.Sprintf("ot: LPN encoding of %d rows from %d entries, want %d and %d", len(out), len(secret), p.n, p.k))
	}
	chunks := (p.n + lpnRowChunk - 1) / lpnRowChunk
	inParallelAligned(chunks, lpnBandChunks, func(lo, hi int) {
		var s lpnScratch
		for c := lo; c < hi; c += lpnBandChunks {
			s.band(p, secret, out, bits, bitsOut, c, min(c+lpnBandChunks, hi))
		}
	})
}

// lpnGather sets dst[r] ^= the XOR of the lpnWeight entries of secret that
// idx lists for row r (lpnGatherAsm's definition, and its test's reference).
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

// lpnGatherBits is lpnGather for the choice bits.
func lpnGatherBits(bits []uint8, idx []int32, dst []uint8) {
	for r := range dst {
		ix := idx[r*lpnWeight : r*lpnWeight+lpnWeight : r*lpnWeight+lpnWeight]
		dst[r] ^= bits[ix[0]] ^ bits[ix[1]] ^ bits[ix[2]] ^ bits[ix[3]] ^ bits[ix[4]] ^
			bits[ix[5]] ^ bits[ix[6]] ^ bits[ix[7]] ^ bits[ix[8]] ^ bits[ix[9]]
	}
}
