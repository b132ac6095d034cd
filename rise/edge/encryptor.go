package edge

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// Ciphertext is a CKKS ciphertext (c0, c1), one slice of N words per limb,
// in the NTT domain and standard form (Lattigo's ckks layout), with
// m ≈ (c0 + c1·s)/Scale.
type Ciphertext struct {
	C0, C1 [][]uint64
	Scale  float64
}

// NewCiphertext allocates a ciphertext for the context.
func (c *Context) NewCiphertext() *Ciphertext {
	ct := &Ciphertext{}
	for range c.limbs {
		ct.C0 = append(ct.C0, make([]uint64, c.params.N))
		ct.C1 = append(ct.C1, make([]uint64, c.params.N))
	}
	return ct
}

func (c *Context) checkCiphertext(ct *Ciphertext) error {
	if ct == nil || len(ct.C0) != len(c.limbs) || len(ct.C1) != len(c.limbs) {
		return fmt.Errorf("edge: ciphertext shape does not match the %d-limb context", len(c.limbs))
	}
	for i := range ct.C0 {
		if len(ct.C0[i]) != c.params.N || len(ct.C1[i]) != c.params.N {
			return fmt.Errorf("edge: ciphertext limb %d has wrong length", i)
		}
	}
	return nil
}

// Encryptor is the streaming public-key encryptor. Its working memory is
// two bank-sized buffers of N words (the paper's BG0 and BG1) plus N bytes
// each for u and e1 and the PRNG state; the output ciphertext's limbs serve
// as NTT scratch. It is not safe for concurrent use.
type Encryptor struct {
	ctx   *Context
	pk    *PublicKey
	bg0   []uint64 // encoded message + e0, signed, all limbs
	bg1   []uint64 // NTT(u mod q_i) for the limb in flight
	u, e1 []int8
	prng  *PRNG
	nonce uint64
	tab   *rns.NTTTable // PathRNS: the lean forward table, refilled per limb
}

// NewEncryptor returns an encryptor for pk seeded from crypto/rand.
func NewEncryptor(ctx *Context, pk *PublicKey) (*Encryptor, error) {
	seed, err := NewSeed()
	if err != nil {
		return nil, err
	}
	return NewEncryptorSeed(ctx, pk, seed)
}

// NewEncryptorSeed returns an encryptor whose randomness is the SHAKE stream
// of seed (deterministic; for tests and known-answer vectors).
func NewEncryptorSeed(ctx *Context, pk *PublicKey, seed [SeedSize]byte) (*Encryptor, error) {
	if pk == nil || len(pk.p0) != len(ctx.limbs) || len(pk.p1) != len(ctx.limbs) {
		return nil, fmt.Errorf("edge: public key does not match the context")
	}
	n := ctx.params.N
	e := &Encryptor{ctx: ctx, pk: pk, bg0: make([]uint64, n), bg1: make([]uint64, n),
		u: make([]int8, n), e1: make([]int8, n), prng: NewPRNG(seed)}
	if ctx.path == PathRNS {
		t, err := ctx.leanTable(rns.NTTForward)
		if err != nil {
			return nil, err
		}
		e.tab = t
	}
	return e, nil
}

// WorkingBytes is the encryptor's working memory beyond the key and the
// context, computed from its actual buffers (the PRNG counted by its struct
// size), including its own twiddle table on PathRNS.
func (e *Encryptor) WorkingBytes() int {
	w := 8*(len(e.bg0)+len(e.bg1)) + len(e.u) + len(e.e1) + prngBytes
	if e.tab != nil {
		w += rnsHeaderBytes + e.tab.TableBytes()
	}
	return w
}

// prngBytes is the size of a PRNG (Keccak state, seed, one block).
const prngBytes = 200 + 136 + 32 + SeedSize + 16 + BlockSize + 24

func stream(kind, nonce uint64) uint64 { return nonce<<8 | kind }

// Encrypt encodes values (at most N/2 real slots) at the given scale and
// encrypts them under the public key into ct: c0 = pk0·u + e0 + Δm,
// c1 = pk1·u + e1, limb by limb. It allocates nothing.
func (e *Encryptor) Encrypt(values []float64, scale float64, ct *Ciphertext) error {
	c := e.ctx
	if err := c.checkCiphertext(ct); err != nil {
		return err
	}
	if err := encodeInto(e.bg0, values, scale, c.logN); err != nil {
		return err
	}
	return e.encryptEncoded(scale, ct, nil)
}

// EncryptCoeffs encrypts the polynomial Σ round(Δ·coeffs[i])·X^i directly
// (coefficient encoding, as HEVEC-style inner-product queries use): the
// same encryption as Encrypt without the slot encoding. It allocates
// nothing.
func (e *Encryptor) EncryptCoeffs(coeffs []float64, scale float64, ct *Ciphertext) error {
	c := e.ctx
	if err := c.checkCiphertext(ct); err != nil {
		return err
	}
	n := 1 << c.logN
	if len(coeffs) > n {
		return fmt.Errorf("edge: %d coefficients exceed N=%d", len(coeffs), n)
	}
	if !(scale >= 1) || math.IsInf(scale, 0) {
		return fmt.Errorf("edge: scale %v out of range", scale)
	}
	m := ints(e.bg0)
	clear(m)
	for i, v := range coeffs {
		y := math.Floor(v*scale + 0.5)
		if math.IsNaN(y) || y >= maxCoeff || y <= -maxCoeff {
			return fmt.Errorf("edge: coefficient %d = %v does not fit at scale %v", i, v, scale)
		}
		m[i] = int64(y)
	}
	return e.encryptEncoded(scale, ct, nil)
}

// encryptEncoded encrypts the signed message coefficients held in bg0,
// calling mark (when not nil) as each phase ends (EncryptPhased).
func (e *Encryptor) encryptEncoded(scale float64, ct *Ciphertext, mark func(Phase)) error {
	c := e.ctx
	e.nonce++
	p := e.prng
	// Δm + e0 as signed integers (|e0| ≤ 21).
	p.Seek(stream(StreamE0, e.nonce), 0)
	p.addBinomial(ints(e.bg0))
	p.Seek(stream(StreamU, e.nonce), 0)
	p.SampleTernary(e.u)
	p.Seek(stream(StreamE1, e.nonce), 0)
	p.SampleBinomial(e.e1)
	markPhase(mark, PhaseSample)
	if c.path.isRNS() {
		if err := e.encryptRNS(ct); err != nil {
			return err
		}
		ct.Scale = scale
		return nil
	}
	m := ints(e.bg0)
	for i := range c.limbs {
		l := &c.limbs[i]
		q := l.mod.Q
		c0, c1 := ct.C0[i], ct.C1[i]
		smallToMod(e.bg1, e.u, q)
		for j, x := range m {
			c0[j] = l.mod.ReduceSigned(x)
		}
		smallToMod(c1, e.e1, q)
		markPhase(mark, PhaseLift)
		// One twiddle generation for the limb's three transforms.
		l.ntt.Forward3(e.bg1, c0, c1)
		markPhase(mark, PhaseNTT)
		l.mulAdd2(c0, c1, e.bg1, e.pk.p0[i], e.pk.p1[i])
		markPhase(mark, PhaseProduct)
	}
	ct.Scale = scale
	return nil
}

// addBinomial adds centered binomial samples to dst.
func (p *PRNG) addBinomial(dst []int64) {
	var tmp [48]int8
	for i := 0; i < len(dst); i += len(tmp) {
		k := min(len(tmp), len(dst)-i)
		p.SampleBinomial(tmp[:k])
		d := dst[i : i+k]
		for j := range d {
			d[j] += int64(tmp[j])
		}
	}
}

// SeededCiphertext is the upload half of a symmetric ciphertext: c0 and the
// public seed from which the server regenerates c1 = a (ExpandSeeded).
type SeededCiphertext struct {
	Seed  [SeedSize]byte
	C0    [][]uint64
	Scale float64
}

// NewSeededCiphertext allocates a seeded ciphertext for the context.
func (c *Context) NewSeededCiphertext() *SeededCiphertext {
	ct := &SeededCiphertext{}
	for range c.limbs {
		ct.C0 = append(ct.C0, make([]uint64, c.params.N))
	}
	return ct
}

// SymEncryptor encrypts under the secret key with c1 = a expanded from a
// public seed, so only c0 and the seed travel (half the upload).
type SymEncryptor struct {
	ctx   *Context
	sk    *SecretKey
	bg0   []uint64
	bg1   []uint64
	prng  *PRNG // secret randomness (errors)
	pub   *PRNG // public randomness (a)
	nonce uint64
	tab   *rns.NTTTable // PathRNS: the lean forward table, refilled per limb
}

// NewSymEncryptor returns a symmetric encryptor for sk seeded from crypto/rand.
func NewSymEncryptor(ctx *Context, sk *SecretKey) (*SymEncryptor, error) {
	seed, err := NewSeed()
	if err != nil {
		return nil, err
	}
	if sk == nil || len(sk.s) != len(ctx.limbs) {
		return nil, fmt.Errorf("edge: secret key does not match the context")
	}
	n := ctx.params.N
	e := &SymEncryptor{ctx: ctx, sk: sk, bg0: make([]uint64, n), bg1: make([]uint64, n),
		prng: NewPRNG(seed), pub: NewPRNG(seed)}
	if ctx.path == PathRNS {
		if e.tab, err = ctx.leanTable(rns.NTTForward); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// WorkingBytes is the working memory beyond the key and the context
// (including the PathRNS table).
func (e *SymEncryptor) WorkingBytes() int {
	w := 8*(len(e.bg0)+len(e.bg1)) + 2*prngBytes
	if e.tab != nil {
		w += rnsHeaderBytes + e.tab.TableBytes()
	}
	return w
}

// EncryptSeeded encrypts values: c0 = -a·s + e + Δm with a_i the uniform
// NTT-domain polynomial of stream (StreamA, limb i) of a fresh public seed.
func (e *SymEncryptor) EncryptSeeded(values []float64, scale float64, ct *SeededCiphertext) error {
	c := e.ctx
	if ct == nil || len(ct.C0) != len(c.limbs) {
		return fmt.Errorf("edge: seeded ciphertext shape does not match the context")
	}
	for i := range ct.C0 {
		if len(ct.C0[i]) != c.params.N {
			return fmt.Errorf("edge: seeded ciphertext limb %d has wrong length", i)
		}
	}
	if err := encodeInto(e.bg0, values, scale, c.logN); err != nil {
		return err
	}
	e.nonce++
	// The public seed is drawn from the secret stream: fresh per ciphertext.
	e.prng.Seek(stream(StreamSecret, e.nonce), 0)
	e.prng.Read(ct.Seed[:])
	e.pub.Reseed(ct.Seed)
	e.prng.Seek(stream(StreamE0, e.nonce), 0)
	e.prng.addBinomial(ints(e.bg0))
	m := ints(e.bg0)
	for i := range c.limbs {
		l := &c.limbs[i]
		e.pub.Seek(StreamA+uint64(i)<<8, 0)
		e.pub.SampleUniform(e.bg1, l.mod.Q)
		c0 := ct.C0[i]
		for j, x := range m {
			c0[j] = l.mod.ReduceSigned(x)
		}
		if c.path.isRNS() {
			t, err := c.tableFor(e.tab, i)
			if err != nil {
				return err
			}
			t.Forward(c0, c0)
			rns.MulMont(e.bg1, e.sk.sm[i], e.bg1, &l.rmod) // a·s (bg1 is free after)
			rns.Sub(c0, e.bg1, c0, l.mod.Q)
			continue
		}
		l.ntt.Forward(c0)
		l.mulSub(c0, e.bg1, e.sk.sm[i])
	}
	ct.Scale = scale
	return nil
}

// ExpandSeeded is the server-side expansion of a seeded ciphertext into a
// full one: c1 limb i is regenerated from the seed.
func (c *Context) ExpandSeeded(sct *SeededCiphertext) (*Ciphertext, error) {
	if sct == nil || len(sct.C0) != len(c.limbs) {
		return nil, fmt.Errorf("edge: seeded ciphertext shape does not match the context")
	}
	ct := c.NewCiphertext()
	p := NewPRNG(sct.Seed)
	for i := range c.limbs {
		if len(sct.C0[i]) != c.params.N {
			return nil, fmt.Errorf("edge: seeded ciphertext limb %d has wrong length", i)
		}
		copy(ct.C0[i], sct.C0[i])
		p.Seek(StreamA+uint64(i)<<8, 0)
		p.SampleUniform(ct.C1[i], c.limbs[i].mod.Q)
	}
	ct.Scale = sct.Scale
	return ct, nil
}

// Decryptor decrypts and decodes ciphertexts of the context.
type Decryptor struct {
	ctx  *Context
	sk   *SecretKey
	nl   int // limbs used: the longest prefix with product < 2^126
	acc  [][]uint64
	buf  []uint64
	inv  [][]uint64 // inv[k][j] = q_j^-1 mod q_k, j < k
	half [2]uint64  // (Q'-1)/2 as (hi, lo)
	qp   [2]uint64  // Q' as (hi, lo)
	// rns paths: lean inverse tables, one per used limb (PathRNSShared) or
	// one refilled per limb (PathRNS).
	itab []*rns.NTTTable
}

// NewDecryptor returns a decryptor for sk.
func NewDecryptor(ctx *Context, sk *SecretKey) (*Decryptor, error) {
	if sk == nil || len(sk.s) != len(ctx.limbs) {
		return nil, fmt.Errorf("edge: secret key does not match the context")
	}
	d := &Decryptor{ctx: ctx, sk: sk, buf: make([]uint64, ctx.params.N)}
	bitsUsed := 0.0
	for _, l := range ctx.limbs {
		b := math.Log2(float64(l.mod.Q))
		if bitsUsed+b >= 126 {
			break
		}
		bitsUsed += b
		d.nl++
	}
	d.qp = [2]uint64{0, 1}
	for k := 0; k < d.nl; k++ {
		d.acc = append(d.acc, make([]uint64, ctx.params.N))
		row := make([]uint64, k)
		mk := &ctx.limbs[k].mod
		for j := 0; j < k; j++ {
			row[j] = rns.ModExp(ctx.limbs[j].mod.Q%mk.Q, mk.Q-2, mk.Q)
		}
		d.inv = append(d.inv, row)
		d.qp = mul128(d.qp, ctx.limbs[k].mod.Q)
	}
	// half = (Q'-1)/2 (Q' odd)
	d.half = [2]uint64{d.qp[0] >> 1, d.qp[1]>>1 | d.qp[0]<<63}
	switch ctx.path {
	case PathRNS:
		t, err := ctx.leanTable(rns.NTTBackward)
		if err != nil {
			return nil, err
		}
		d.itab = []*rns.NTTTable{t}
	case PathRNSShared:
		for k := 0; k < d.nl; k++ {
			t, err := rns.NewNTTTableLean(ctx.params.N, ctx.limbs[k].mod.Q, rns.NTTBackward)
			if err != nil {
				return nil, fmt.Errorf("edge: rns table: %w", err)
			}
			d.itab = append(d.itab, t)
		}
	}
	return d, nil
}

// invTable returns the lean inverse table for limb k on the rns paths.
func (d *Decryptor) invTable(k int) (*rns.NTTTable, error) {
	if len(d.itab) > 1 {
		return d.itab[k], nil
	}
	t := d.itab[0]
	if hdr := d.ctx.limbs[k].hdr; t.Q != hdr.Q {
		if err := t.Retarget(hdr); err != nil {
			return nil, fmt.Errorf("edge: limb %d: %w", k, err)
		}
	}
	return t, nil
}

// Decrypt writes the first len(out) slots of ct into out.
func (d *Decryptor) Decrypt(ct *Ciphertext, out []float64) error { return d.decrypt(ct, out, nil) }

// decrypt is Decrypt calling mark (when not nil) as each phase ends
// (DecryptPhased).
func (d *Decryptor) decrypt(ct *Ciphertext, out []float64, mark func(Phase)) error {
	c := d.ctx
	if err := c.checkCiphertext(ct); err != nil {
		return err
	}
	if !(ct.Scale >= 1) {
		return fmt.Errorf("edge: ciphertext scale %v invalid", ct.Scale)
	}
	for k := 0; k < d.nl; k++ {
		l := &c.limbs[k]
		q := l.mod.Q
		for j, x := range ct.C0[k] {
			if x >= q || ct.C1[k][j] >= q {
				return fmt.Errorf("edge: ciphertext limb %d coefficient %d not reduced", k, j)
			}
		}
		a := d.acc[k]
		copy(a, ct.C0[k])
		if d.itab != nil {
			t, err := d.invTable(k)
			if err != nil {
				return err
			}
			rns.MACMont(ct.C1[k], d.sk.sm[k], a, &l.rmod)
			t.Backward(a, a)
			continue
		}
		l.mulAdd(a, ct.C1[k], d.sk.sm[k])
		markPhase(mark, PhaseDecProduct)
		l.ntt.Inverse(a)
		markPhase(mark, PhaseINTT)
	}
	f := floats(d.buf)
	inv := 1 / ct.Scale
	for j := range f {
		f[j] = d.crt(j) * inv
	}
	markPhase(mark, PhaseCRT)
	err := decodeFrom(d.buf, out, c.logN)
	markPhase(mark, PhaseDecode)
	return err
}

// crt reconstructs coefficient j centered in (-Q'/2, Q'/2) by Garner's
// algorithm in 128-bit arithmetic and returns it as a float64.
func (d *Decryptor) crt(j int) float64 {
	var v [64]uint64
	c := d.ctx
	for k := 0; k < d.nl; k++ {
		mk := &c.limbs[k].mod
		x := d.acc[k][j]
		for i := 0; i < k; i++ {
			x = mk.BRed((x+mk.Q-mk.Reduce(v[i]))%mk.Q, d.inv[k][i])
		}
		v[k] = x
	}
	acc := [2]uint64{0, v[d.nl-1]}
	for k := d.nl - 2; k >= 0; k-- {
		acc = mul128(acc, c.limbs[k].mod.Q)
		acc = add128(acc, v[k])
	}
	if less128(d.half, acc) { // acc > (Q'-1)/2: negative
		r := sub128(d.qp, acc)
		return -(float64(r[0])*0x1p64 + float64(r[1]))
	}
	return float64(acc[0])*0x1p64 + float64(acc[1])
}
