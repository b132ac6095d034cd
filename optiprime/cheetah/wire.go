package cheetah

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Wire formats. Both are versioned and fully validated on decode.
//
// Input (client → server), a seeded symmetric ciphertext at the top level:
//
//	"RCI" 0x01 | logN u8 | logT u8 | level u8 | seed [32] | c0 limbs
//
// where limb i holds N values of bitlen(q_i) bits each (NTT domain),
// bit-packed little-endian; every value must be < q_i.
//
// Output (server → client), a compressed ciphertext at level 0:
//
//	"RCO" 0x01 | logN u8 | logT u8 | d0 u8 | d1 u8 | nkeep u32
//	| nkeep values of (b0-d0) bits: round(c0[pos]/2^d0) at the kept positions
//	| N values of (b0-d1) bits: round(c1/2^d1)
//
// (coefficient domain, b0 = bitlen(q_0)). The kept positions are not sent:
// both parties derive them from the public layer plan.
const (
	inputHeader  = 4 + 3
	outputHeader = 4 + 4 + 4
)

var (
	inputMagic  = [4]byte{'R', 'C', 'I', 1}
	outputMagic = [4]byte{'R', 'C', 'O', 1}
)

// InputSize is the exact wire size of a seeded input ciphertext.
func (p Parameters) InputSize() int {
	s := inputHeader + SeedSize
	for _, b := range p.QiBits() {
		s += share.PackedLen(p.N(), b)
	}
	return s
}

// OutputSize is the exact wire size of a compressed output ciphertext.
func (p Parameters) OutputSize(nkeep, d0, d1 int) int {
	b0 := p.QiBits()[0]
	return outputHeader + share.PackedLen(nkeep, b0-d0) + share.PackedLen(p.N(), b0-d1)
}

// DropBits returns how many low bits of c0 (d0) and c1 (d1) can be dropped
// from a ciphertext with noise bound b at level 'from' once switched to
// level 0, so that ‖E‖ + 2^(d0-1) + N·2^(d1-1) stays within q0/(2t).
func (p Parameters) DropBits(b Bound, from, logT int) (d0, d1 int, err error) {
	b0 := p.ModSwitch(b, from, 0)
	budget := p.Budget(0, logT)
	if b0 >= budget {
		return 0, 0, fmt.Errorf("cheetah: noise 2^%.1f exceeds level-0 budget 2^%.1f for t=2^%d", b0.Log2(), budget.Log2(), logT)
	}
	slack := float64(budget - b0)
	q0bits := p.QiBits()[0]
	clamp := func(d int) int {
		if d < 0 {
			return 0
		}
		if d > q0bits-1 {
			return q0bits - 1
		}
		return d
	}
	// 2^(d-1) ≤ slack/2  and  N·2^(d1-1) ≤ slack/2.
	d0 = clamp(int(math.Floor(math.Log2(slack/2))) + 1)
	d1 = clamp(int(math.Floor(math.Log2(slack/(2*float64(p.N()))))) + 1)
	return d0, d1, nil
}

// Compressed is a level-0 ciphertext with unused c0 coefficients removed and
// low bits dropped.
type Compressed struct {
	LogN, LogT, D0, D1 int
	C0                 []uint64 // at the kept positions, (b0-d0) bits each
	C1                 []uint64 // N values, (b0-d1) bits each
}

// Compress switches ct to level 0, keeps c0 only at the given positions and
// drops the low bits allowed by DropBits. The noise bound must already
// include re-randomization.
func (ev *Evaluator) Compress(ct *Ciphertext, keep []int) (*Compressed, error) {
	p := ev.p
	N := p.N()
	for _, k := range keep {
		if k < 0 || k >= N {
			return nil, fmt.Errorf("cheetah: kept position %d outside [0,%d)", k, N)
		}
	}
	level := ct.Level()
	d0, d1, err := p.DropBits(ct.Noise, level, ct.LogT)
	if err != nil {
		return nil, err
	}
	rq := p.RingQ().AtLevel(level)
	r0 := p.RingQ().AtLevel(0)
	c := [2]ring.Poly{r0.NewPoly(), r0.NewPoly()}
	for i := 0; i < 2; i++ {
		buf := rq.NewPoly()
		tmp := *ct.Ct.Value[i].CopyNew()
		rq.DivRoundByLastModulusManyNTT(level, tmp, buf, tmp)
		c[i].Coeffs[0] = append(c[i].Coeffs[0][:0], tmp.Coeffs[0]...)
		r0.INTT(c[i], c[i])
	}
	b0 := p.QiBits()[0]
	round := func(v uint64, d int) uint64 {
		if d == 0 {
			return v
		}
		r := (v + uint64(1)<<uint(d-1)) >> uint(d)
		return r & (uint64(1)<<uint(b0-d) - 1)
	}
	out := &Compressed{LogN: p.LogN(), LogT: ct.LogT, D0: d0, D1: d1, C0: make([]uint64, len(keep)), C1: make([]uint64, N)}
	for i, k := range keep {
		out.C0[i] = round(c[0].Coeffs[0][k], d0)
	}
	for j := 0; j < N; j++ {
		out.C1[j] = round(c[1].Coeffs[0][j], d1)
	}
	return out, nil
}

// DecryptCompressed decrypts the kept coefficients (in the order of keep).
func (d *Decryptor) DecryptCompressed(c *Compressed, keep []int) ([]uint64, error) {
	p := d.p
	N := p.N()
	if c.LogN != p.LogN() || len(c.C1) != N {
		return nil, fmt.Errorf("cheetah: compressed ciphertext for logN %d, parameters have %d", c.LogN, p.LogN())
	}
	if len(keep) != len(c.C0) {
		return nil, fmt.Errorf("cheetah: %d kept positions for %d c0 values", len(keep), len(c.C0))
	}
	if err := checkLogT(c.LogT); err != nil {
		return nil, err
	}
	q0 := p.RLWE().Q()[0]
	r0 := p.RingQ().AtLevel(0)
	c1 := r0.NewPoly()
	for j, v := range c.C1 {
		c1.Coeffs[0][j] = (v << uint(c.D1)) % q0
	}
	r0.NTT(c1, c1)
	r0.MulCoeffsMontgomery(c1, d.sk.Value.Q, c1)
	r0.INTT(c1, c1)
	phase := r0.NewPoly()
	for i, k := range keep {
		if k < 0 || k >= N {
			return nil, fmt.Errorf("cheetah: kept position %d outside [0,%d)", k, N)
		}
		phase.Coeffs[0][k] = ring.CRed((c.C0[i]<<uint(c.D0))%q0+c1.Coeffs[0][k], q0)
	}
	m := p.decodeScaled(phase, 0, c.LogT)
	out := make([]uint64, len(keep))
	for i, k := range keep {
		out[i] = m[k]
	}
	return out, nil
}

// MarshalBinary encodes a compressed ciphertext. q0bits is bitlen(q_0).
func (c *Compressed) MarshalBinary(q0bits int) ([]byte, error) {
	if c.D0 >= q0bits || c.D1 >= q0bits || c.D0 < 0 || c.D1 < 0 {
		return nil, fmt.Errorf("cheetah: dropped bits (%d,%d) invalid for %d-bit q0", c.D0, c.D1, q0bits)
	}
	buf := make([]byte, outputHeader, outputHeader+share.PackedLen(len(c.C0), q0bits-c.D0)+share.PackedLen(len(c.C1), q0bits-c.D1))
	copy(buf, outputMagic[:])
	buf[4], buf[5], buf[6], buf[7] = byte(c.LogN), byte(c.LogT), byte(c.D0), byte(c.D1)
	binary.LittleEndian.PutUint32(buf[8:], uint32(len(c.C0)))
	buf = share.Pack(buf, c.C0, q0bits-c.D0)
	buf = share.Pack(buf, c.C1, q0bits-c.D1)
	return buf, nil
}

// UnmarshalCompressed decodes and validates an output ciphertext for p.
func (p Parameters) UnmarshalCompressed(data []byte) (*Compressed, error) {
	if len(data) < outputHeader {
		return nil, fmt.Errorf("cheetah: output ciphertext of %d bytes shorter than its header", len(data))
	}
	if [4]byte(data[:4]) != outputMagic {
		return nil, fmt.Errorf("cheetah: bad output ciphertext magic/version % x", data[:4])
	}
	c := &Compressed{LogN: int(data[4]), LogT: int(data[5]), D0: int(data[6]), D1: int(data[7])}
	if c.LogN != p.LogN() {
		return nil, fmt.Errorf("cheetah: output ciphertext logN %d, expected %d", c.LogN, p.LogN())
	}
	if err := checkLogT(c.LogT); err != nil {
		return nil, err
	}
	b0 := p.QiBits()[0]
	if c.D0 >= b0 || c.D1 >= b0 {
		return nil, fmt.Errorf("cheetah: dropped bits (%d,%d) invalid for %d-bit q0", c.D0, c.D1, b0)
	}
	N := p.N()
	nkeep := binary.LittleEndian.Uint32(data[8:])
	if nkeep > uint32(N) {
		return nil, fmt.Errorf("cheetah: %d kept coefficients exceed N=%d", nkeep, N)
	}
	want := p.OutputSize(int(nkeep), c.D0, c.D1)
	if len(data) != want {
		return nil, fmt.Errorf("cheetah: output ciphertext has %d bytes, expected %d", len(data), want)
	}
	rest := data[outputHeader:]
	var err error
	if c.C0, rest, err = unpackBits(rest, int(nkeep), b0-c.D0); err != nil {
		return nil, err
	}
	if c.C1, _, err = unpackBits(rest, N, b0-c.D1); err != nil {
		return nil, err
	}
	return c, nil
}

// MarshalInput encodes a seeded input ciphertext (c0 and the seed).
func (p Parameters) MarshalInput(ct *Ciphertext, seed [SeedSize]byte) ([]byte, error) {
	if ct.Level() != p.MaxLevel() {
		return nil, fmt.Errorf("cheetah: input ciphertext at level %d, expected %d", ct.Level(), p.MaxLevel())
	}
	buf := make([]byte, inputHeader, p.InputSize())
	copy(buf, inputMagic[:])
	buf[4], buf[5], buf[6] = byte(p.LogN()), byte(ct.LogT), byte(ct.Level())
	buf = append(buf, seed[:]...)
	for i, b := range p.QiBits() {
		buf = share.Pack(buf, ct.Ct.Value[0].Coeffs[i], b)
	}
	return buf, nil
}

// UnmarshalInput decodes and validates a seeded input ciphertext and expands
// its c1 from the seed.
func (p Parameters) UnmarshalInput(data []byte) (*Ciphertext, error) {
	if len(data) != p.InputSize() {
		return nil, fmt.Errorf("cheetah: input ciphertext has %d bytes, expected %d", len(data), p.InputSize())
	}
	if [4]byte(data[:4]) != inputMagic {
		return nil, fmt.Errorf("cheetah: bad input ciphertext magic/version % x", data[:4])
	}
	if int(data[4]) != p.LogN() || int(data[6]) != p.MaxLevel() {
		return nil, fmt.Errorf("cheetah: input ciphertext logN %d level %d, expected %d and %d", data[4], data[6], p.LogN(), p.MaxLevel())
	}
	logT := int(data[5])
	if err := checkLogT(logT); err != nil {
		return nil, err
	}
	var seed [SeedSize]byte
	copy(seed[:], data[inputHeader:])
	rest := data[inputHeader+SeedSize:]
	level := p.MaxLevel()
	ct := rlwe.NewCiphertext(p.rlwe, 1, level)
	for i, b := range p.QiBits() {
		var vals []uint64
		var err error
		if vals, rest, err = unpackBits(rest, p.N(), b); err != nil {
			return nil, err
		}
		qi := p.rlwe.Q()[i]
		for j, v := range vals {
			if v >= qi {
				return nil, fmt.Errorf("cheetah: input coefficient %d of limb %d not reduced mod q_%d", j, i, i)
			}
		}
		copy(ct.Value[0].Coeffs[i], vals)
	}
	if err := p.expandC1(seed, level, ct.Value[1]); err != nil {
		return nil, err
	}
	return &Ciphertext{Ct: ct, LogT: logT, Noise: p.FreshSK()}, nil
}

// unpackBits reads count packed values from the front of src and returns
// them with the bytes that follow.
func unpackBits(src []byte, count, bits int) ([]uint64, []byte, error) {
	nb := share.PackedLen(count, bits)
	if len(src) < nb {
		return nil, nil, fmt.Errorf("cheetah: truncated packed section: %d bytes, need %d", len(src), nb)
	}
	out := make([]uint64, count)
	share.UnpackInto(out, src, bits)
	return out, src[nb:], nil
}
