package share

import "fmt"

// Split secret-shares x: it returns (x0, x1) with x0 uniform and
// x0 + x1 ≡ x (mod 2^ℓ).
func (r Ring) Split(prg *PRG, x []uint64) (x0, x1 []uint64) {
	x0 = prg.Uniform(r, len(x))
	x1 = r.SubVec(make([]uint64, len(x)), x, x0)
	return x0, x1
}

// Reconstruct returns x0 + x1 mod 2^ℓ.
func (r Ring) Reconstruct(x0, x1 []uint64) ([]uint64, error) {
	if len(x0) != len(x1) {
		return nil, fmt.Errorf("share: reconstruct %d and %d shares", len(x0), len(x1))
	}
	return r.AddVec(make([]uint64, len(x0)), x0, x1), nil
}
