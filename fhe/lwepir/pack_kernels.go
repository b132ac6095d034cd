package lwepir

import "math/bits"

// Kernels of the packing's online half for three digits (PackV1) and two
// (PackV2),
// written out so the compiler drops the bounds checks and the inner loop
// over digits: 1.5–2× the generic macMont and mergeAutoMac here. Values
// stay below q between calls and are reduced lazily inside one: a
// Montgomery result is below 2q, a sum of it and two residues below 4q.

// macMont3 is macMont (not adding) for three digits.
func macMont3(out, d0, d1, d2, k0, k1, k2 []uint64, q, mred uint64) {
	n := len(out)
	d0, d1, d2, k0, k1, k2 = d0[:n], d1[:n], d2[:n], k0[:n], k1[:n], k2[:n]
	for i := 0; i < n; i++ {
		h0, l0 := bits.Mul64(d0[i], k0[i])
		h1, l1 := bits.Mul64(d1[i], k1[i])
		h2, l2 := bits.Mul64(d2[i], k2[i])
		lo, c := bits.Add64(l0, l1, 0)
		hi := h0 + h1 + c
		lo, c = bits.Add64(lo, l2, 0)
		hi += h2 + c
		out[i] = montReduce(hi, lo, q, mred)
	}
}

// mergeAutoMac3 is mergeAutoMac for three digits (u a whole polynomial,
// of a power-of-two length; the others a piece of one).
func mergeAutoMac3(out, u, auto, d0, d1, d2, k0, k1, k2 []uint64, q, mred uint64) {
	n := len(out)
	wrap := uint64(len(u) - 1)
	auto, d0, d1, d2, k0, k1, k2 = auto[:n], d0[:n], d1[:n], d2[:n], k0[:n], k1[:n], k2[:n]
	for i := 0; i < n; i++ {
		h0, l0 := bits.Mul64(d0[i], k0[i])
		h1, l1 := bits.Mul64(d1[i], k1[i])
		h2, l2 := bits.Mul64(d2[i], k2[i])
		lo, c := bits.Add64(l0, l1, 0)
		hi := h0 + h1 + c
		lo, c = bits.Add64(lo, l2, 0)
		hi += h2 + c
		out[i] = montPlus(hi, lo, out[i]+u[auto[i]&wrap], q, mred)
	}
}

// mergeAutoMac2 is mergeAutoMac for two digits (PackV2), as mergeAutoMac3.
func mergeAutoMac2(out, u, auto, d0, d1, k0, k1 []uint64, q, mred uint64) {
	n := len(out)
	wrap := uint64(len(u) - 1)
	auto, d0, d1, k0, k1 = auto[:n], d0[:n], d1[:n], k0[:n], k1[:n]
	for i := 0; i < n; i++ {
		h0, l0 := bits.Mul64(d0[i], k0[i])
		h1, l1 := bits.Mul64(d1[i], k1[i])
		lo, c := bits.Add64(l0, l1, 0)
		hi := h0 + h1 + c
		out[i] = montPlus(hi, lo, out[i]+u[auto[i]&wrap], q, mred)
	}
}

// montReduce is the Montgomery reduction of the 128-bit value hi·2^64 + lo
// (below q·2^64), brought below q: the dot-product kernels' last step.
func montReduce(hi, lo, q, mred uint64) uint64 {
	m, _ := bits.Mul64(lo*mred, q)
	r := hi - m + q // < 2q
	if r >= q {
		r -= q
	}
	return r
}

// montPlus is the Montgomery reduction of the 128-bit sum hi·2^64 + lo
// (hi < q) plus add (< 2q), reduced below q: the merge kernels' last step.
func montPlus(hi, lo, add, q, mred uint64) uint64 {
	m, _ := bits.Mul64(lo*mred, q)
	r := hi - m + q + add // < 4q
	if r >= 2*q {
		r -= 2 * q
	}
	if r >= q {
		r -= q
	}
	return r
}

// mergeSumsBoth is mergeSums with both e and o present.
func mergeSumsBoth(s, u, e, o, mono []uint64, q, mred uint64) {
	n := len(s)
	u, e, o, mono = u[:n], e[:n], o[:n], mono[:n]
	for i := 0; i < n; i++ {
		hi, lo := bits.Mul64(o[i], mono[i])
		m, _ := bits.Mul64(lo*mred, q)
		t := hi - m + q // < 2q
		x := e[i] + t   // < 3q
		if x >= 2*q {
			x -= 2 * q
		}
		if x >= q {
			x -= q
		}
		s[i] = x
		y := e[i] + 2*q - t // < 3q
		if y >= 2*q {
			y -= 2 * q
		}
		if y >= q {
			y -= q
		}
		u[i] = y
	}
}
