package lwepir

import (
	"encoding/binary"
	"fmt"
)

// Fields of w ≤ wideField bits go through a 64-bit word a field: a field
// shifted by the 0–7 bits of its first byte still fits in one. Wider ones
// (none at the default parameters: keys ≤ 54 bits, answers ≤ 32) go bit
// run by bit run.
const wideField = 56

// packBits appends vals, each below 2^w (w ≤ 64), as w-bit fields,
// least significant bit first, to dst; the last byte is padded with zeros.
func packBits(dst []byte, vals []uint64, w int) []byte {
	if w > wideField {
		return packBitsSlow(dst, vals, w)
	}
	start := len(dst)
	size := packedLen(len(vals), w)
	// 8 bytes of slack: each field is stored with a whole word.
	dst = append(dst, make([]byte, size+8)...)
	out := dst[start:]
	mask := uint64(1)<<w - 1
	var acc uint64 // pending bits, fewer than 8, low first
	var n, pos int
	for _, v := range vals {
		acc |= (v & mask) << n
		n += w
		binary.LittleEndian.PutUint64(out[pos:], acc)
		whole := n / 8
		pos += whole
		acc >>= 8 * whole
		n -= 8 * whole
	}
	if n > 0 {
		out[pos] = byte(acc)
	}
	return dst[:start+size]
}

// packBitsSlow is packBits for any width, a bit run at a time.
func packBitsSlow(dst []byte, vals []uint64, w int) []byte {
	var acc uint64 // pending bits, low first
	var n int      // how many
	for _, v := range vals {
		for left := w; left > 0; {
			take := min(left, 64-n, 8)
			acc |= (v & (1<<take - 1)) << n
			v >>= take
			left -= take
			n += take
			for n >= 8 {
				dst = append(dst, byte(acc))
				acc >>= 8
				n -= 8
			}
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// packedLen is the size of count w-bit fields.
func packedLen(count, w int) int { return (count*w + 7) / 8 }

// unpackBits reads len(vals) w-bit fields from b, which must be exactly
// their packed length with zero padding, refusing any field ≥ bound.
func unpackBits(b []byte, vals []uint64, w int, bound uint64, what string) error {
	if len(b) != packedLen(len(vals), w) {
		return fmt.Errorf("%w: %s of %d bytes, want %d", ErrParams, what, len(b), packedLen(len(vals), w))
	}
	if w > wideField {
		return unpackBitsSlow(b, vals, w, bound, what)
	}
	mask := uint64(1)<<w - 1
	// Fields whose word would run past b's end are read from a padded copy
	// of the tail.
	var tail [16]byte
	bit := 0
	for i := range vals {
		byteI, off := bit/8, uint(bit%8)
		var word uint64
		if byteI+8 <= len(b) {
			word = binary.LittleEndian.Uint64(b[byteI:])
		} else {
			clear(tail[:])
			copy(tail[:], b[byteI:])
			word = binary.LittleEndian.Uint64(tail[:])
		}
		v := word >> off & mask
		if v >= bound {
			return fmt.Errorf("%w: %s: a value not below its modulus", ErrParams, what)
		}
		vals[i] = v
		bit += w
	}
	if pad := len(b)*8 - bit; pad > 0 && b[len(b)-1]>>(8-pad) != 0 {
		return fmt.Errorf("%w: %s: nonzero padding", ErrParams, what)
	}
	return nil
}

// unpackBitsSlow is unpackBits for any width, a bit run at a time.
func unpackBitsSlow(b []byte, vals []uint64, w int, bound uint64, what string) error {
	var bit int
	for i := range vals {
		var v uint64
		for got := 0; got < w; {
			byteI, off := bit/8, bit%8
			take := min(w-got, 8-off)
			v |= uint64(b[byteI]>>off&(1<<take-1)) << got
			got += take
			bit += take
		}
		if v >= bound {
			return fmt.Errorf("%w: %s: a value not below its modulus", ErrParams, what)
		}
		vals[i] = v
	}
	if pad := len(b)*8 - bit; pad > 0 && b[len(b)-1]>>(8-pad) != 0 {
		return fmt.Errorf("%w: %s: nonzero padding", ErrParams, what)
	}
	return nil
}
