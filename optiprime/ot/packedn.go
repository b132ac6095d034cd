package ot

import (
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Packed 1-out-of-N OT. When an instance's 2^logN messages of `bits` bits
// fit one 64-bit word in whole bytes (the millionaires' leaves: 16
// messages of 2 bits, 32 bits), the key-slot masks of every message of the
// instance are one word: slot v of ⊕_b K_b^{v_b} for all v at once is
// ⊕_b (K_b^0 ∧ ¬M_b ∨ K_b^1 ∧ M_b), where M_b covers the slots whose
// index has bit b set. The sender then masks an instance with a few word
// operations instead of 2^logN slotPad calls over a table of 2^logN
// values, and the receiver unmasks its message with one shift of the word
// (a shift by a secret amount is constant time; no table is indexed by
// its choice). The bytes on the wire and the outputs are ReplyN's and
// FinishN's, which TestPackedNMatchesReplyN checks.

// packedWidth returns the bits of an instance's messages when they can be
// packed into one word of whole bytes, and 0 otherwise.
func packedWidth(logN, bits int) int {
	w := bits << logN
	if w > 64 || w%8 != 0 {
		return 0
	}
	return w
}

// slotMasks returns M_b for b < logN (see above).
func slotMasks(logN, bits int) []uint64 {
	m := make([]uint64, logN)
	for v := 0; v < 1<<logN; v++ {
		for b := range m {
			if v>>b&1 == 1 {
				m[b] |= share.Mask(bits) << (v * bits)
			}
		}
	}
	return m
}

// packedPad returns the masks of all of an instance's messages, slot v
// being slotPad(v, …) of the keys whose low words are k0[b], k1[b].
func packedPad(k0, k1, masks []uint64) uint64 {
	pad := uint64(0)
	for b, m := range masks {
		pad ^= k0[b]&^m | k1[b]&m
	}
	return pad
}

// ReplyNPacked is ReplyN for messages given packed: words[i] holds
// instance i's 2^logN messages of `bits` bits, message v at bits
// [v·bits, (v+1)·bits). 2^logN·bits must be a multiple of 8 and at most 64.
func (s *Sender) ReplyNPacked(u []byte, words []uint64, logN, bits int) ([]byte, error) {
	if err := checkLogN(logN); err != nil {
		return nil, err
	}
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	w := packedWidth(logN, bits)
	if w == 0 {
		return nil, fmt.Errorf("ot: %d messages of %d bits do not pack into a word of whole bytes", 1<<logN, bits)
	}
	if len(words)*logN > MaxBatch {
		return nil, fmt.Errorf("ot: %d instances of 1-out-of-%d OT exceed the batch limit", len(words), 1<<logN)
	}
	q, first, err := s.process(len(words)*logN, u)
	if err != nil {
		return nil, err
	}
	k0, k1 := make([]uint64, len(q)), make([]uint64, len(q))
	hashPairs(q, first, s.s, func(lo int, h0, h1 []block) {
		for i := range h0 {
			k0[lo+i], k1[lo+i] = h0[i].lo64(), h1[i].lo64()
		}
	})
	masks := slotMasks(logN, bits)
	wordMask := share.Mask(w)
	nb := w / 8
	out := make([]byte, len(words)*nb)
	inParallel(len(words), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pad := packedPad(k0[i*logN:(i+1)*logN], k1[i*logN:(i+1)*logN], masks)
			putLE(out[i*nb:(i+1)*nb], (words[i]^pad)&wordMask)
		}
	})
	return out, nil
}

// finishNPacked is FinishN for a packed width w (packedWidth).
func (r *Receiver) finishNPacked(req *Request, reply []byte, bits, w int) ([]uint64, error) {
	logN, n := req.logN, len(req.nChoice)
	nb := w / 8
	if len(reply) != n*nb {
		return nil, fmt.Errorf("ot: 1-out-of-%d messages: %d bytes, want %d", 1<<logN, len(reply), n*nb)
	}
	k := make([]uint64, len(req.t))
	hashOnes(req.t, req.first, func(lo int, h []block) {
		for i := range h {
			k[lo+i] = h[i].lo64()
		}
	})
	m := share.Mask(bits)
	out := make([]uint64, n)
	inParallel(n, func(lo, hi int) {
		var buf [8]byte
		for i := lo; i < hi; i++ {
			copy(buf[:], reply[i*nb:(i+1)*nb])
			y := binary.LittleEndian.Uint64(buf[:])
			for b := 0; b < logN; b++ {
				y ^= k[i*logN+b] // the receiver holds K_b^{c_b}: slot c of the XOR is its pad
			}
			out[i] = y >> (uint(req.nChoice[i]) * uint(bits)) & m
		}
	})
	return out, nil
}

// putLE writes the len(dst) ≤ 8 low bytes of y, little-endian.
func putLE(dst []byte, y uint64) {
	switch len(dst) {
	case 8:
		binary.LittleEndian.PutUint64(dst, y)
	case 4:
		binary.LittleEndian.PutUint32(dst, uint32(y))
	default:
		for k := range dst {
			dst[k] = byte(y >> (8 * k))
		}
	}
}
