package soc

// CoreCosts are the cycles one operation takes in software on the
// baseline core: BlackParrot, a single-issue in-order RV64G core at 1 GHz
// with 32 KB I- and D-caches (paper §VI-A). Each constant is an instruction
// count for RV64G without the bit-manipulation extension, at one cycle per
// instruction, plus the stalls an in-order pipeline exposes: multiplies are
// assumed 4-cycle pipelined (3 stall cycles when the next instruction needs
// the product), floating-point operations 4 cycles. These are
// first-principles estimates, not measurements and not fitted to the paper.
type CoreCosts struct {
	ClockHz float64 `json:"clock_hz"`

	// CPI is the cycles per instruction charged to measured instruction
	// counts (MeasuredSoftware): 1, the issue rate of BlackParrot's
	// single-issue in-order pipeline (Petrisko et al., "BlackParrot: An
	// Agile Open-Source RISC-V Multicore for Accelerator SoCs", IEEE Micro
	// 2020), which forwards integer results fully; the exposed latencies of
	// its 4-cycle multiplier and 5-cycle FPU (its platform guide) are not
	// added, so measured baselines are a lower bound on cycles, beside the
	// streaming-miss term below.
	CPI float64 `json:"cpi"`

	// Keccak-f[1600], 24 rounds: θ 20 XOR for the column parities, 5×(3-instruction
	// rotate + XOR) for D, 25 XOR; ρ/π 24 rotates × 3; χ 25 × (not, and, xor);
	// ι 2 → 214 ALU instructions, plus ≈50 loads/stores per round because 25
	// lanes + 5 parities + temporaries exceed 31 registers → 264 × 24 = 6,336,
	// plus absorbing/squeezing 17 lanes (≈64) → 6,400.
	KeccakPerm float64 `json:"keccak_perm"`
	// Binomial sample: a third of two 8-byte loads, two shifts/masks, two
	// 21-bit popcounts by the SWAR sequence (12 instructions each, no Zbb),
	// subtract, store → ≈31.
	Binomial float64 `json:"binomial"`
	// Ternary byte: load, compare with 255 and branch, r·171 (multiply + 3
	// stalls), shift, 3·x by shift-add, subtract, −1, store, loop → 12.
	TernaryByte float64 `json:"ternary_byte"`
	// Adding a small sample into a 64-bit coefficient: load, load, add, store → 4.
	SmallAdd float64 `json:"small_add"`
	// Complex FFT butterfly (float64): 4 loads, 4 stores, 4 fmul + 2 fadd for
	// the twiddle product, 4 fadd/fsub, 2 loop → 20 instructions, ≈6 exposed
	// FP latency cycles → 26.
	FFTButterfly float64 `json:"fft_butterfly"`
	// Complex twiddle update (4 fmul, 2 fadd, dependent) → 12.
	FFTTwiddle float64 `json:"fft_twiddle"`
	// Slot placement: index update g·5 mod 2N, bit reversal by table-free
	// loop is amortised by the incremental update; load, store → 10.
	SlotMove float64 `json:"slot_move"`
	// Float coefficient: load, fmul, fadd, floor/convert, two range
	// compares, store, loop → 8 + 4 FP latency → 12.
	FloatCoeff float64 `json:"float_coeff"`
	// Lift of a small value: load byte, sign, shift, and, add, store, loop → 7.
	Lift float64 `json:"lift"`
	// Signed 64-bit reduction (Barrett with a 128-bit quotient estimate):
	// mulhu, mul, sub, 2 conditional corrections, load/store → 9 + 6 stalls = 15.
	ReduceSigned float64 `json:"reduce_signed"`
	// NTT butterfly with a Shoup/Montgomery twiddle product: 2 loads, 2
	// stores, mul + mulhu + mul (two dependent, 6 stalls), add, sub, 2
	// conditional subtractions (3 each), loop 2 → 17 + 6 = 23.
	Butterfly float64 `json:"butterfly"`
	// Twiddle generation product (Montgomery, 3 dependent multiplies) → 14.
	NTTTwiddle float64 `json:"ntt_twiddle"`
	// Pointwise modular product: 2 loads, Montgomery product (3 dependent
	// multiplies: 9 stalls), correction 3, store, loop → 8 + 9 = 17.
	ModMul float64 `json:"mod_mul"`
	// Pointwise modular addition: 2 loads, add, compare, conditional
	// subtract (3), store → 7.
	ModAdd float64 `json:"mod_add"`
	// Garner step: subtract mod q, Montgomery product by q_j^-1 → 6 + 14 = 20.
	CRTModMul float64 `json:"crt_mod_mul"`
	// 128-bit multiply-accumulate: mul, mulhu, mul (high word), add with
	// carry (sltu, add) → 7 + 6 stalls = 13.
	CRTWide float64 `json:"crt_wide"`

	// DCacheBytes and MissPenalty model streaming misses: when the
	// polynomial an operation walks (8·N bytes) exceeds the data cache, every
	// 64-byte line costs MissPenalty cycles (an L2 hit on BlackParrot's
	// on-chip L2, ≈40 cycles assumed), i.e. MissPenalty/8 per 64-bit word.
	DCacheBytes float64 `json:"dcache_bytes"`
	MissPenalty float64 `json:"miss_penalty"`
	LineBytes   float64 `json:"line_bytes"`
}

// DefaultCore returns the BlackParrot model described at CoreCosts.
func DefaultCore() CoreCosts {
	return CoreCosts{
		ClockHz:      1e9, // paper §VI-A: single-core BP at 1 GHz
		CPI:          1,
		KeccakPerm:   6400,
		Binomial:     31,
		TernaryByte:  12,
		SmallAdd:     4,
		FFTButterfly: 26,
		FFTTwiddle:   12,
		SlotMove:     10,
		FloatCoeff:   12,
		Lift:         7,
		ReduceSigned: 15,
		Butterfly:    23,
		NTTTwiddle:   14,
		ModMul:       17,
		ModAdd:       7,
		CRTModMul:    20,
		CRTWide:      13,
		DCacheBytes:  32 << 10, // paper §VI-A: 32 KB D-cache
		MissPenalty:  40,
		LineBytes:    64,
	}
}

// wordStall is the miss stall per 64-bit word streamed from a polynomial of
// n coefficients (0 while two such polynomials fit the D-cache).
func (c CoreCosts) wordStall(n int) float64 {
	if 2*8*float64(n) <= c.DCacheBytes {
		return 0
	}
	return c.MissPenalty * 8 / c.LineBytes
}

// Misses is the streaming-miss stall of the operations' memory traffic at
// ring degree n (the miss part of Cycles).
func (c CoreCosts) Misses(o OpCounts, n int) float64 {
	s := c.wordStall(n)
	return s * (2*o.SmallAdds + 8*o.FFTButterflies + o.SlotMoves + 2*o.FloatCoeffs + o.Lifts +
		2*o.ReduceSigned + 4*o.Butterflies + 3*o.ModMul + 3*o.ModAdd)
}

// Cycles is the software cycle count of the operations at ring degree n.
// Streaming misses are charged per word touched: two words read and written
// per butterfly (log N passes over the polynomial), three per pointwise
// operation.
func (c CoreCosts) Cycles(o OpCounts, n int) float64 {
	s := c.wordStall(n)
	cy := o.KeccakPerms*c.KeccakPerm +
		o.BinomialSamples*c.Binomial +
		o.TernaryBytes*c.TernaryByte +
		o.SmallAdds*(c.SmallAdd+2*s) +
		o.FFTButterflies*(c.FFTButterfly+8*s) +
		o.FFTTwiddles*c.FFTTwiddle +
		o.SlotMoves*(c.SlotMove+s) +
		o.FloatCoeffs*(c.FloatCoeff+2*s) +
		o.Lifts*(c.Lift+s) +
		o.ReduceSigned*(c.ReduceSigned+2*s) +
		o.Butterflies*(c.Butterfly+4*s) +
		o.NTTTwiddles*c.NTTTwiddle +
		o.ModMul*(c.ModMul+3*s) +
		o.ModAdd*(c.ModAdd+3*s) +
		o.CRTModMul*c.CRTModMul +
		o.CRTWide*c.CRTWide
	return cy
}
