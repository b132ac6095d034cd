package fpga

import "math/bits"

// Work is cluster busy time in element operations; Cycles divides by the
// lanes.
type Work struct {
	Butterflies float64 `json:"butterflies"` // NTT cluster
	ModMuls     float64 `json:"modmuls"`     // modmul cluster
	AutMoves    float64 `json:"aut_moves"`   // automorphism cluster (coefficients permuted)
	ModAdds     float64 `json:"modadds"`     // modadd cluster
}

func (w *Work) add(v Work, k float64) {
	w.Butterflies += k * v.Butterflies
	w.ModMuls += k * v.ModMuls
	w.AutMoves += k * v.AutMoves
	w.ModAdds += k * v.ModAdds
}

// Seconds is the time of the busiest cluster (clusters overlap).
func (w Work) Seconds(c Config) float64 {
	cy := max(w.Butterflies/float64(c.NTTButterflies), w.ModMuls/float64(c.ModMulLanes),
		w.AutMoves/float64(c.AutLanes), w.ModAdds/float64(c.ModAddLanes))
	return cy / c.ClockHz
}

// opCosts are the element operations of the layer's HE operations at
// ring degree N with L ciphertext limbs, K special limbs and dnum digits
// (hybrid key switching as in Lattigo's rlwe evaluator, all in the NTT
// domain):
//
//   - cpmult: ciphertext × evaluation-domain plaintext, accumulated: 2LN
//     products and 2LN additions.
//   - hoist: the part of a key switch shared by all automorphisms of one
//     input (decomposition): INTT of c1 on L limbs, basis extension of
//     each digit to L+K limbs (≈ (L+K)·N products per digit) and its NTT.
//   - rotate: the per-automorphism rest: permuting the dnum·(L+K) digit
//     limbs and c0 (L limbs), the inner product with the key (2 polys ×
//     dnum digits × (L+K) limbs: products and additions), and ModDown of
//     both polys (INTT on K limbs, extension to L limbs, NTT on L limbs,
//     ≈ (K+1)·L·N products each), plus adding c0.
//   - a full automorphism (on a partial sum, not hoisted) is hoist + rotate.
type opCosts struct {
	cpmult, hoist, rotate Work
}

func costs(w Workload) opCosts {
	N := float64(w.N)
	L, K, D := float64(w.L), float64(w.K), float64(w.Dnum)
	logN := float64(bits.Len(uint(w.N)) - 1)
	ntt := N / 2 * logN // butterflies of one limb transform
	var c opCosts
	c.cpmult = Work{ModMuls: 2 * L * N, ModAdds: 2 * L * N}
	c.hoist = Work{
		Butterflies: (L + D*(L+K)) * ntt,
		ModMuls:     D * (L + K) * N,
	}
	c.rotate = Work{
		AutMoves:    (D*(L+K) + L) * N,
		ModMuls:     2*D*(L+K)*N + 2*(K+1)*L*N,
		ModAdds:     2*D*(L+K)*N + 2*L*N,
		Butterflies: 2 * (K + L) * ntt,
	}
	return c
}

// full is one non-hoisted automorphism with its key switch.
func (c opCosts) full() Work {
	var w Work
	w.add(c.hoist, 1)
	w.add(c.rotate, 1)
	return w
}
