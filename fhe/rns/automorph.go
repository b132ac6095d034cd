package rns

import "fmt"

// AutomorphismNTTIndex returns the permutation that applies X → X^galEl to a
// limb in the NTT domain (Lattigo's layout): out[i] = in[index[i]].
func AutomorphismNTTIndex(N int, galEl uint64) ([]uint32, error) {
	if N < 2 || N&(N-1) != 0 {
		return nil, fmt.Errorf("rns: ring degree %d is not a power of two", N)
	}
	if galEl&1 == 0 {
		return nil, fmt.Errorf("rns: Galois element %d is even", galEl)
	}
	logN := 0
	for 1<<logN < N {
		logN++
	}
	mask := uint64(2*N - 1)
	index := make([]uint32, N)
	for i := 0; i < N; i++ {
		t1 := 2*bitReverse(uint64(i), logN) + 1
		t2 := ((galEl * t1 & mask) - 1) >> 1
		index[i] = uint32(bitReverse(t2, logN))
	}
	return index, nil
}

// Permute sets out[i] = in[index[i]]. in and out must not alias.
func Permute(in, out []uint64, index []uint32) {
	if useAVX512 {
		permuteAVX512(in, out, index)
		return
	}
	permuteGo(in, out, index)
}

func permuteGo(in, out []uint64, index []uint32) {
	out = out[:len(index)]
	for i, j := range index {
		out[i] = in[j]
	}
}

// GaloisElementForRotation returns 5^k mod 2N (k may be negative), the
// element Lattigo uses to rotate CKKS slots / BGV columns left by k.
func GaloisElementForRotation(N int, k int) uint64 {
	twoN := uint64(2 * N)
	kk := k % (N / 2)
	if kk < 0 {
		kk += N / 2
	}
	return ModExp(5, uint64(kk), twoN)
}
