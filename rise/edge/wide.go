package edge

import "math/bits"

// 128-bit helpers, values as (hi, lo).

func mul128(a [2]uint64, b uint64) [2]uint64 {
	h1, l1 := bits.Mul64(a[1], b)
	_, l2 := bits.Mul64(a[0], b)
	return [2]uint64{h1 + l2, l1}
}

func add128(a [2]uint64, b uint64) [2]uint64 {
	lo, c := bits.Add64(a[1], b, 0)
	return [2]uint64{a[0] + c, lo}
}

func sub128(a, b [2]uint64) [2]uint64 {
	lo, br := bits.Sub64(a[1], b[1], 0)
	hi, _ := bits.Sub64(a[0], b[0], br)
	return [2]uint64{hi, lo}
}

func less128(a, b [2]uint64) bool {
	return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])
}
