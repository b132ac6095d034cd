package soc

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/rise/edge"
)

// OpCounts are the operations of one phase of a conversion, counted along
// the code path of package edge (see Counts). Fractional values are
// expectations (the ternary sampler's rejections).
type OpCounts struct {
	KeccakPerms     float64 `json:"keccak_perms"`     // Keccak-f[1600] permutations (2 per 272-byte PRNG block)
	BinomialSamples float64 `json:"binomial_samples"` // centered binomial k=21 samples (two 21-bit popcounts each)
	TernaryBytes    float64 `json:"ternary_bytes"`    // bytes the ternary sampler examines (accept r < 255)
	SmallAdds       float64 `json:"small_adds"`       // e0 added into the encoded message (addBinomial)
	FFTButterflies  float64 `json:"fft_butterflies"`  // complex butterflies of the encoder/decoder FFT
	FFTTwiddles     float64 `json:"fft_twiddles"`     // complex twiddle updates (one per FFT block)
	SlotMoves       float64 `json:"slot_moves"`       // slot ↔ bit-reversed leaf placements
	FloatCoeffs     float64 `json:"float_coeffs"`     // per-coefficient float scale/round/convert
	Lifts           float64 `json:"lifts"`            // small signed value → mod q (smallToMod)
	ReduceSigned    float64 `json:"reduce_signed"`    // 64-bit signed coefficient → mod q
	Butterflies     float64 `json:"butterflies"`      // NTT/INTT butterflies (radix-2 equivalent)
	NTTTwiddles     float64 `json:"ntt_twiddles"`     // on-the-fly twiddle products (one per NTT block)
	ModMul          float64 `json:"mod_mul"`          // pointwise modular products (incl. INTT's N^-1 scaling)
	ModAdd          float64 `json:"mod_add"`          // pointwise modular additions
	CRTModMul       float64 `json:"crt_mod_mul"`      // Garner modular products and subtractions
	CRTWide         float64 `json:"crt_wide"`         // 128-bit multiply-accumulate steps of the CRT
	NTTs            float64 `json:"ntts"`             // number of transforms (for pipeline drain)
	Limbs           int     `json:"limbs"`            // limbs processed by the crypto phase
}

func (o *OpCounts) add(p OpCounts) {
	o.KeccakPerms += p.KeccakPerms
	o.BinomialSamples += p.BinomialSamples
	o.TernaryBytes += p.TernaryBytes
	o.SmallAdds += p.SmallAdds
	o.FFTButterflies += p.FFTButterflies
	o.FFTTwiddles += p.FFTTwiddles
	o.SlotMoves += p.SlotMoves
	o.FloatCoeffs += p.FloatCoeffs
	o.Lifts += p.Lifts
	o.ReduceSigned += p.ReduceSigned
	o.Butterflies += p.Butterflies
	o.NTTTwiddles += p.NTTTwiddles
	o.ModMul += p.ModMul
	o.ModAdd += p.ModAdd
	o.CRTModMul += p.CRTModMul
	o.CRTWide += p.CRTWide
	o.NTTs += p.NTTs
	if p.Limbs > o.Limbs {
		o.Limbs = p.Limbs
	}
}

// Phases splits a conversion into the three parts the systems place
// differently: Codec (CKKS encode or decode, always on the core), Sample
// (PRNG and samplers: on the core for baseline and RACE, on the accelerator
// for RISE) and Crypto (the en/decryption arithmetic: on the core only for
// the baseline).
type Phases struct {
	Codec  OpCounts `json:"codec"`
	Sample OpCounts `json:"sample"`
	Crypto OpCounts `json:"crypto"`
}

// Total sums the three phases.
func (p Phases) Total() OpCounts {
	var t OpCounts
	t.add(p.Codec)
	t.add(p.Sample)
	t.add(p.Crypto)
	return t
}

// BinomialBytes is the number of PRNG bytes edge's SampleBinomial draws for
// n samples: 16 bytes per three samples (126 of the 128 bits), a partial
// group drawing a full 16 bytes (edge/sampler.go).
func BinomialBytes(n int) int { return (n + 2) / 3 * 16 }

// TernaryBytesExpected is the expected number of bytes edge's SampleTernary
// examines for n values: each byte is accepted with probability 255/256.
func TernaryBytesExpected(n int) float64 { return float64(n) * 256 / 255 }

// perms is the number of Keccak-f[1600] permutations for a stream read of
// the given length from block 0: every 272-byte PRNG block is one SHAKE256
// call whose 80-byte input fits one 136-byte rate (one absorbing
// permutation) and whose 272-byte output needs a second squeeze (edge/prng.go:
// BlockSize = two Keccak rates).
func perms(bytes float64) float64 {
	return 2 * math.Ceil(bytes/float64(edge.BlockSize))
}

// decryptLimbs mirrors edge.NewDecryptor: the longest prefix of primes whose
// product stays below 2^126.
func decryptLimbs(q []uint64) int {
	used, nl := 0.0, 0
	for _, qi := range q {
		b := math.Log2(float64(qi))
		if used+b >= 126 {
			break
		}
		used += b
		nl++
	}
	return nl
}

// Counts returns the operation counts of one message-to-ciphertext
// conversion (Encryptor.Encrypt with a full slot vector) and of one
// ciphertext-to-message conversion (Decryptor.Decrypt), following edge's
// code path:
//
// Encrypt: encodeInto places N/2 slots, runs the inverse embedding FFT on
// N/2 complex points ((N/4)·log2(N/2) butterflies, one twiddle update per
// block) and scales/rounds N coefficients; the PRNG draws e0 (N binomial
// samples, added into the message), u (N ternary values) and e1 (N binomial
// samples) from three fresh streams; per limb: two lifts of N small values
// (u and e1), N signed reductions (m+e0), three forward NTTs sharing one
// on-the-fly twiddle generation (N−1 products) and mulAdd2 (2N products and
// 2N additions).
//
// Decrypt: per limb used by the CRT (the prefix with product < 2^126),
// c0 + c1·s (N products, N additions), one inverse NTT (N/2·log N
// butterflies, N−1 twiddle products, N scalings by N^-1); then per
// coefficient Garner's algorithm (nl(nl−1)/2 modular steps, nl−1 128-bit
// multiply-accumulates) and a float conversion; decodeFrom runs the forward
// embedding FFT and reads N/2 slots.
func Counts(p edge.Params) (enc, dec Phases, err error) {
	n := p.N
	if n < 16 || n&(n-1) != 0 || len(p.Q) == 0 {
		return enc, dec, fmt.Errorf("rise: invalid parameters N=%d with %d primes", n, len(p.Q))
	}
	logN := float64(bits.Len(uint(n)) - 1)
	N := float64(n)
	L := len(p.Q)
	fftBfly := N / 4 * (logN - 1)
	fftBlocks := N/2 - 1 // Σ over stages of the number of blocks of an N/2-point FFT
	ntt := N / 2 * logN

	enc.Codec = OpCounts{FFTButterflies: fftBfly, FFTTwiddles: fftBlocks, SlotMoves: N / 2, FloatCoeffs: N}
	bb := float64(BinomialBytes(n))
	tb := TernaryBytesExpected(n)
	enc.Sample = OpCounts{
		KeccakPerms:     2*perms(bb) + perms(tb),
		BinomialSamples: 2 * N,
		TernaryBytes:    tb,
		SmallAdds:       N,
	}
	fl := float64(L)
	enc.Crypto = OpCounts{
		Lifts:        2 * N * fl,
		ReduceSigned: N * fl,
		Butterflies:  3 * ntt * fl,
		NTTTwiddles:  (N - 1) * fl,
		ModMul:       2 * N * fl,
		ModAdd:       2 * N * fl,
		NTTs:         3 * fl,
		Limbs:        L,
	}

	nl := decryptLimbs(p.Q)
	if nl == 0 {
		return enc, dec, fmt.Errorf("rise: no prime of %v fits the decryptor's 126-bit CRT", p.Q)
	}
	fn := float64(nl)
	dec.Crypto = OpCounts{
		Butterflies: ntt * fn,
		NTTTwiddles: (N - 1) * fn,
		ModMul:      2 * N * fn, // c1·s and the N^-1 scaling
		ModAdd:      N * fn,
		NTTs:        fn,
		Limbs:       nl,
	}
	dec.Codec = OpCounts{
		CRTModMul:      N * fn * (fn - 1) / 2,
		CRTWide:        N * (fn - 1),
		FloatCoeffs:    N,
		FFTButterflies: fftBfly,
		FFTTwiddles:    fftBlocks,
		SlotMoves:      N / 2,
	}
	return enc, dec, nil
}
