package lwepir

import "fmt"

// packBits appends vals, each below 2^w (w ≤ 64), as w-bit fields,
// least significant bit first, to dst; the last byte is padded with zeros.
func packBits(dst []byte, vals []uint64, w int) []byte {
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
