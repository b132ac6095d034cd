package share

import "fmt"

// PackedLen returns the byte length of n packed values of the given width.
func PackedLen(n, bits int) int { return (n*bits + 7) / 8 }

// Pack appends the low `bits` bits of each value to dst, little-endian bit
// order, with no padding between values. bits must be in [1, 64].
func Pack(dst []byte, vals []uint64, bits int) []byte {
	var acc uint64 // pending bits, low first
	var nacc int
	m := Mask(bits)
	for _, v := range vals {
		v &= m
		acc |= v << nacc
		take := min(64-nacc, bits) // bits of v that fit in acc
		nacc += take
		for nacc >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nacc -= 8
		}
		if take < bits {
			acc |= v >> take << nacc
			nacc += bits - take
			for nacc >= 8 {
				dst = append(dst, byte(acc))
				acc >>= 8
				nacc -= 8
			}
		}
	}
	if nacc > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// Unpack decodes n values of the given width. It fails unless b is exactly
// PackedLen(n, bits) bytes long and the padding bits of the last byte are 0.
func Unpack(b []byte, n, bits int) ([]uint64, error) {
	if bits < 1 || bits > 64 {
		return nil, fmt.Errorf("share: unpack width %d outside [1, 64]", bits)
	}
	if n < 0 || len(b) != PackedLen(n, bits) {
		return nil, fmt.Errorf("share: unpack %d values of %d bits: have %d bytes, want %d", n, bits, len(b), PackedLen(n, bits))
	}
	out := make([]uint64, n)
	UnpackInto(out, b, bits)
	if pad := n * bits % 8; pad != 0 && b[len(b)-1]>>pad != 0 {
		return nil, fmt.Errorf("share: unpack: nonzero padding bits")
	}
	return out, nil
}

// UnpackInto decodes len(out) values of the given width (in [1, 64]) from
// the start of b, which must hold at least PackedLen(len(out), bits) bytes;
// it checks neither the length nor the padding, for callers that frame and
// check the packed bytes themselves.
func UnpackInto(out []uint64, b []byte, bits int) {
	pos := 0 // bit position
	for i := range out {
		var v uint64
		got := 0
		for got < bits {
			byteIdx, off := pos>>3, pos&7
			take := min(8-off, bits-got)
			v |= uint64(b[byteIdx]>>off) & Mask(take) << got
			got += take
			pos += take
		}
		out[i] = v
	}
}
