package nonlinear

import (
	"github.com/rosemary-fhe/rosemary/optiprime/ot"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// The functions below give the exact traffic of each protocol, derived from
// the message formats (tests compare them with the transport's counters), so
// layers too large to run here can be projected with package link. Flights
// assume the step starts after the client has received or exchanged (true
// for every step of this package except right after RevealTo(…, 0) and the
// setup, where the first flight merges with the previous one) and that the
// silent-OT pools hold what the step draws; refills are counted apart
// (RefillBytes, Party.Refills).

// iknpU is an IKNP u matrix for n OTs (setup only).
func iknpU(n int) uint64 { return uint64(128 * ((n + 63) / 64) * 8) }

// otU is a silent OT request: one choice-correction bit per OT.
func otU(n int) uint64 { return uint64((n + 7) / 8) }

const hdr = transport.HeaderSize

func add(a, b transport.Stats) transport.Stats {
	return transport.Stats{BytesC2S: a.BytesC2S + b.BytesC2S, BytesS2C: a.BytesS2C + b.BytesS2C, Frames: a.Frames + b.Frames, Flights: a.Flights + b.Flights}
}

// bothWays is an OT step run in both directions: two exchanges.
func bothWays(u, reply uint64) transport.Stats {
	b := u + hdr + reply + hdr
	return transport.Stats{BytesC2S: b, BytesS2C: b, Flights: 2, Frames: 4}
}

// SetupCost is the traffic of NewParty: in each direction 128 P-256 base
// OTs, an IKNP u matrix for the first Ferret iteration's base and that
// iteration (the small set's, whatever the steady set), 10 frames in 7
// flights. The two directions mirror each other, so both ends count the
// same bytes each way.
func SetupCost() transport.Stats {
	const pt = 65
	choices, trees, _ := ot.FerretSmall.IterationBytes()
	one := pt + 128*pt + iknpU(ot.FerretSmall.BootstrapOTs()) + uint64(choices+trees) + 5*hdr
	return transport.Stats{BytesC2S: one, BytesS2C: one, Frames: 10, Flights: 7}
}

// RefillBytes is the traffic of one steady Ferret iteration of set f, in
// either direction (headers included).
func RefillBytes(f ot.Ferret) uint64 {
	choices, trees, _ := f.IterationBytes()
	return uint64(choices+trees) + 2*hdr
}

// MillionairesCost is the traffic of Millionaires (or Carry) on n values of k
// bits.
func MillionairesCost(n, k int) transport.Stats {
	return millionairesCost([]int{n}, []int{k})
}

// millionairesCost is the traffic of one millionaires' run over batches of
// ns[b] values of ks[b] bits: leafPlan's passes, then the trees' levels,
// each level's ANDs of all batches in one call.
func millionairesCost(ns, ks []int) transport.Stats {
	var st transport.Stats
	for _, pass := range leafPlan(ns, ks) {
		st = add(st, leavesCost(pass, ks))
	}
	cur := make([]int, len(ks))
	for b, k := range ks {
		cur[b] = blocks(k)
	}
	for anyAbove1(cur) {
		ands := 0
		for b, c := range cur {
			if c > 1 {
				ands += ns[b] * (c / 2)
				cur[b] = (c + 1) / 2
			}
		}
		st = add(st, andCost(ands, 2))
	}
	return st
}

// leavesCost is one pass of leaves: its frames in one flight each way.
func leavesCost(pass []frameSpan, ks []int) transport.Stats {
	st := transport.Stats{Flights: 2}
	for _, sp := range pass {
		nf, q := sp.hi-sp.lo, blocks(ks[sp.b])
		st.BytesC2S += otU(nf*q*blockBits) + hdr
		st.BytesS2C += uint64(share.PackedLen(nf*q*(1<<blockBits), 2)) + hdr
		st.Frames += 2
	}
	return st
}

// andCost is the traffic of n ANDs of a bit with w-bit vectors: batches of
// chosen OTs both ways.
func andCost(n, w int) transport.Stats {
	var st transport.Stats
	for lo := 0; lo < n || lo == 0; lo += andBatch {
		na := min(andBatch, n-lo)
		st = add(st, bothWays(otU(na), uint64(share.PackedLen(2*na, w))))
		if lo+andBatch >= n {
			break
		}
	}
	return st
}

// MuxCost is the traffic of Mux on n values in an ℓ-bit ring.
func MuxCost(n, l int) transport.Stats {
	return bothWays(otU(n), uint64(share.PackedLen(n, l)))
}

// DReLUCost is the traffic of DReLU on n values in an ℓ-bit ring.
func DReLUCost(n, l int) transport.Stats { return MillionairesCost(n, l-1) }

// ReLUCost is the traffic of ReLU on n values in an ℓ-bit ring.
func ReLUCost(n, l int) transport.Stats { return add(DReLUCost(n, l), MuxCost(n, l)) }

// B2ACost is the traffic of B2A of n bits into a ring of `bits` bits.
func B2ACost(n, bits int) transport.Stats {
	return transport.Stats{BytesC2S: otU(n) + hdr, BytesS2C: uint64(share.PackedLen(n, bits)) + hdr, Flights: 2, Frames: 2}
}

// TruncateCost is the traffic of Truncate by 2^s on n values in an ℓ-bit
// ring.
func TruncateCost(n, l, s int) transport.Stats {
	return add(MillionairesCost(n, l), B2ACost(n, s))
}

// MaxPoolCost is the traffic of MaxPool over n/window windows of `window`
// values in an ℓ-bit ring.
func MaxPoolCost(n, window, l int) transport.Stats {
	return maxPoolCost(n, window, l, l)
}

// MaxPoolNonnegCost is the traffic of MaxPoolNonneg over n/window windows
// of `window` values below 2^bits in an ℓ-bit ring.
func MaxPoolNonnegCost(n, window, l, bits int) transport.Stats {
	return maxPoolCost(n, window, l, bits+1)
}

// maxPoolCost is max-pool's traffic with comparisons over cw bits.
func maxPoolCost(n, window, l, cw int) transport.Stats {
	var st transport.Stats
	nw := n / window
	for width := window; width > 1; width = (width + 1) / 2 {
		st = add(st, add(DReLUCost(nw*(width/2), cw), MuxCost(nw*(width/2), l)))
	}
	return st
}

// TruncateExactCost is the traffic of TruncateExact by 2^s on n values in
// an ℓ-bit ring.
func TruncateExactCost(n, l, s int) transport.Stats {
	return add(millionairesCost([]int{n, n}, []int{l, s}), B2ACost(2*n, l))
}

// TruncateNonnegCost is the traffic of TruncateNonneg by 2^s on n values in
// an ℓ-bit ring.
func TruncateNonnegCost(n, l, s int) transport.Stats {
	return add(MillionairesCost(n, s), B2ACost(2*n, l))
}

// ReLUTruncateCost is the traffic of ReLUTruncate by 2^s on n values in an
// ℓ-bit ring.
func ReLUTruncateCost(n, l, s int) transport.Stats {
	return add(add(millionairesCost([]int{n, n}, []int{l - 1, s}), B2ACost(2*n, l)), MuxCost(n, l))
}
