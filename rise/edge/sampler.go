package edge

import "math/bits"

// BinomialK is the parameter k of the centered binomial error distribution:
// a sample is popcount(a) - popcount(b) for two independent k-bit words, with
// variance k/2 = 10.5 (σ ≈ 3.24, as in SEAL / SEAL-Embedded).
const BinomialK = 21

const mask21 = 1<<BinomialK - 1

// SampleBinomial fills out with centered binomial samples in [-21, 21]. Three
// samples are drawn from each 16 bytes (126 of the 128 bits). The sampler is
// constant time: popcounts and subtractions only.
func (p *PRNG) SampleBinomial(out []int8) {
	i := 0
	for ; i+3 <= len(out); i += 3 {
		lo, hi := p.next16()
		out[i] = binom(lo)
		out[i+1] = binom(lo>>42 | hi<<22)
		out[i+2] = binom(hi >> 20)
	}
	if i < len(out) {
		lo, hi := p.next16()
		tail := [3]int8{binom(lo), binom(lo>>42 | hi<<22), binom(hi >> 20)}
		copy(out[i:], tail[:])
	}
}

func binom(x uint64) int8 {
	return int8(bits.OnesCount64(x&mask21)) - int8(bits.OnesCount64((x>>BinomialK)&mask21))
}

// SampleTernary fills out with values uniform in {-1, 0, 1}: bytes r are
// drawn until r < 255 (255 is divisible by 3, so the three residues are
// equally likely), then r mod 3 is computed without division, branch or
// table: floor(r/3) = (r·171) >> 9 for all r < 256. Only the (public,
// data-independent) rejection of the value 255 branches.
func (p *PRNG) SampleTernary(out []int8) {
	for i := range out {
		r := uint32(p.nextByte())
		for r == 255 {
			r = uint32(p.nextByte())
		}
		out[i] = int8(mod3(r)) - 1
	}
}

// mod3 returns r mod 3 for r < 256 in constant time.
func mod3(r uint32) uint32 {
	return r - 3*((r*171)>>9)
}

// SampleUniform fills out with values uniform in [0, q) by rejection: draws
// of bits.Len64(q-1) bits (from 4 bytes when q ≤ 2^32, else 8) are kept when
// below q. The rejected draws carry no secret.
func (p *PRNG) SampleUniform(out []uint64, q uint64) {
	k := bits.Len64(q - 1)
	mask := uint64(1)<<k - 1
	if k <= 32 {
		for i := range out {
			v := uint64(p.next4()) & mask
			for v >= q {
				v = uint64(p.next4()) & mask
			}
			out[i] = v
		}
		return
	}
	for i := range out {
		v := p.next8() & mask
		for v >= q {
			v = p.next8() & mask
		}
		out[i] = v
	}
}

// smallToMod writes v mod q for small signed values v into out, without
// branching on v.
func smallToMod(out []uint64, v []int8, q uint64) {
	for i, x := range v {
		y := uint64(int64(x))
		out[i] = y + q&-(y>>63)
	}
}
