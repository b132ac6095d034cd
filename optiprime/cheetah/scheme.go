package cheetah

import (
	"crypto/rand"
	"fmt"
	"math"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/ring/ringqp"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

// SeedSize is the size of the seed from which an input ciphertext's c1 is
// expanded (Lattigo's keyed BLAKE2b XOF).
const SeedSize = 32

// Ciphertext is an RLWE ciphertext (NTT domain) with the plaintext modulus
// exponent it is read under and a worst-case noise bound.
type Ciphertext struct {
	Ct    *rlwe.Ciphertext
	LogT  int
	Noise Bound
}

// Level of the ciphertext.
func (c *Ciphertext) Level() int { return c.Ct.Level() }

// CopyNew returns a deep copy.
func (c *Ciphertext) CopyNew() *Ciphertext {
	return &Ciphertext{Ct: c.Ct.CopyNew(), LogT: c.LogT, Noise: c.Noise}
}

// Keys are the client's keys.
type Keys struct {
	SK *rlwe.SecretKey
	PK *rlwe.PublicKey
}

// GenKeys samples a secret key (ternary) and its public key.
func GenKeys(p Parameters) *Keys {
	kg := rlwe.NewKeyGenerator(p.rlwe)
	sk, pk := kg.GenKeyPairNew()
	return &Keys{SK: sk, PK: pk}
}

// GenGaloisKeys generates Galois keys for the given elements.
func GenGaloisKeys(p Parameters, sk *rlwe.SecretKey, galEls []uint64) ([]*rlwe.GaloisKey, error) {
	kg := rlwe.NewKeyGenerator(p.rlwe)
	out := make([]*rlwe.GaloisKey, 0, len(galEls))
	seen := map[uint64]bool{}
	for _, g := range galEls {
		if err := p.checkGalEl(g); err != nil {
			return nil, err
		}
		if g == 1 || seen[g] {
			continue
		}
		seen[g] = true
		out = append(out, kg.GenGaloisKeyNew(g, sk, p.evkParams()))
	}
	return out, nil
}

// Encryptor is the client's secret-key encryptor producing seeded
// ciphertexts.
type Encryptor struct {
	p  Parameters
	sk *rlwe.SecretKey
}

// NewEncryptor returns an encryptor under sk.
func NewEncryptor(p Parameters, sk *rlwe.SecretKey) *Encryptor { return &Encryptor{p: p, sk: sk} }

// EncryptSeeded encrypts round(q·m/t) at the top level; c1 is expanded from
// a fresh random seed, which is returned so that only c0 and the seed need
// to be sent.
func (e *Encryptor) EncryptSeeded(m []uint64, logT int) (*Ciphertext, [SeedSize]byte, error) {
	var seed [SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, seed, fmt.Errorf("cheetah: seed: %w", err)
	}
	prng, err := sampling.NewKeyedPRNG(seed[:])
	if err != nil {
		return nil, seed, fmt.Errorf("cheetah: prng: %w", err)
	}
	level := e.p.MaxLevel()
	pt := rlwe.NewPlaintext(e.p.rlwe, level)
	if err := e.p.encodeScaled(m, level, logT, pt.Value); err != nil {
		return nil, seed, err
	}
	e.p.RingQ().AtLevel(level).NTT(pt.Value, pt.Value)
	pt.IsNTT = true
	ct := rlwe.NewCiphertext(e.p.rlwe, 1, level)
	enc := rlwe.NewEncryptor(e.p.rlwe, e.sk).WithPRNG(prng)
	if err := enc.Encrypt(pt, ct); err != nil {
		return nil, seed, fmt.Errorf("cheetah: encrypt: %w", err)
	}
	return &Ciphertext{Ct: ct, LogT: logT, Noise: e.p.FreshSK()}, seed, nil
}

// expandC1 regenerates c1 (NTT domain) of a seeded ciphertext.
func (p Parameters) expandC1(seed [SeedSize]byte, level int, c1 ring.Poly) error {
	prng, err := sampling.NewKeyedPRNG(seed[:])
	if err != nil {
		return fmt.Errorf("cheetah: prng: %w", err)
	}
	ringqp.NewUniformSampler(prng, *p.rlwe.RingQP()).AtLevel(level, -1).Read(ringqp.Poly{Q: c1})
	return nil
}

// Decryptor decrypts with the client's secret key.
type Decryptor struct {
	p   Parameters
	sk  *rlwe.SecretKey
	dec *rlwe.Decryptor
}

// NewDecryptor returns a decryptor under sk.
func NewDecryptor(p Parameters, sk *rlwe.SecretKey) *Decryptor {
	return &Decryptor{p: p, sk: sk, dec: rlwe.NewDecryptor(p.rlwe, sk)}
}

// Decrypt returns round(t·phase/q) mod t for all N coefficients.
func (d *Decryptor) Decrypt(ct *Ciphertext) ([]uint64, error) {
	if err := checkLogT(ct.LogT); err != nil {
		return nil, err
	}
	if ct.Ct.Degree() != 1 {
		return nil, fmt.Errorf("cheetah: decrypt: degree %d ciphertext", ct.Ct.Degree())
	}
	level := ct.Level()
	pt := rlwe.NewPlaintext(d.p.rlwe, level)
	d.dec.Decrypt(ct.Ct, pt)
	if pt.IsNTT {
		d.p.RingQ().AtLevel(level).INTT(pt.Value, pt.Value)
	}
	return d.p.decodeScaled(pt.Value, level, ct.LogT), nil
}

// Plaintext is a server-side multiplicand: the centered lift of a
// polynomial mod 2^logT, in NTT and Montgomery form at a level, with the
// public quantities its noise growth depends on.
type Plaintext struct {
	Value  ring.Poly
	Level  int
	LogT   int
	NNZ    int     // number of non-zero coefficients
	MaxAbs float64 // max |centered coefficient|
	L1     float64 // Σ |centered coefficient|, which bounds the noise growth
}

// Evaluator is the server side: plaintext products, additions, monomial
// shifts, automorphisms (Lattigo Galois keys), re-randomization under the
// client's public key, and compression.
type Evaluator struct {
	p     Parameters
	pk    *rlwe.PublicKey
	eval  *rlwe.Evaluator
	monos map[int]ring.Poly // NTT+Montgomery X^k at top level
	ops   OpCounts
}

// OpCounts are the operations an evaluator has run: plaintext-ciphertext
// products (MulPlainNew, MulPlainThenAdd) and automorphisms with key
// switching (AutomorphismNew). Cost models check their counts against them.
type OpCounts struct {
	MulPlain      int64
	Automorphisms int64
}

// Ops returns the operations run so far.
func (ev *Evaluator) Ops() OpCounts { return ev.ops }

// NewEvaluator returns an evaluator holding the client's public key and
// Galois keys (either may be nil if unused).
func NewEvaluator(p Parameters, pk *rlwe.PublicKey, gks []*rlwe.GaloisKey) *Evaluator {
	var evk rlwe.EvaluationKeySet
	if len(gks) > 0 {
		evk = rlwe.NewMemEvaluationKeySet(nil, gks...)
	}
	return &Evaluator{p: p, pk: pk, eval: rlwe.NewEvaluator(p.rlwe, evk), monos: map[int]ring.Poly{}}
}

// Params returns the parameters.
func (ev *Evaluator) Params() Parameters { return ev.p }

// EncodePlain prepares w (coefficients mod 2^logT, len ≤ N) for products
// with ciphertexts at the given level.
func (ev *Evaluator) EncodePlain(w []uint64, level, logT int) (*Plaintext, error) {
	if level < 0 || level > ev.p.MaxLevel() {
		return nil, fmt.Errorf("cheetah: level %d out of range", level)
	}
	rq := ev.p.RingQ().AtLevel(level)
	pol := rq.NewPoly()
	if err := ev.p.liftCentered(w, level, logT, pol); err != nil {
		return nil, err
	}
	nnz, maxAbs, l1 := 0, 0.0, 0.0
	t := uint64(1) << uint(logT)
	for _, v := range w {
		v &= t - 1
		if v == 0 {
			continue
		}
		nnz++
		a := float64(v)
		if v >= t/2 {
			a = float64(t - v)
		}
		maxAbs = math.Max(maxAbs, a)
		l1 += a
	}
	rq.NTT(pol, pol)
	rq.MForm(pol, pol)
	return &Plaintext{Value: pol, Level: level, LogT: logT, NNZ: nnz, MaxAbs: maxAbs, L1: l1}, nil
}

func (ev *Evaluator) check2(a, b *Ciphertext) error {
	if a.LogT != b.LogT {
		return fmt.Errorf("cheetah: plaintext moduli 2^%d and 2^%d differ", a.LogT, b.LogT)
	}
	if a.Level() != b.Level() {
		return fmt.Errorf("cheetah: levels %d and %d differ", a.Level(), b.Level())
	}
	return nil
}

// AddPlain adds round(q·m/t) to ct in place (e.g. the server's input share).
// Its rounding is covered by FreshSK.
func (ev *Evaluator) AddPlain(ct *Ciphertext, m []uint64) error {
	level := ct.Level()
	rq := ev.p.RingQ().AtLevel(level)
	pol := rq.NewPoly()
	if err := ev.p.encodeScaled(m, level, ct.LogT, pol); err != nil {
		return err
	}
	rq.NTT(pol, pol)
	rq.Add(ct.Ct.Value[0], pol, ct.Ct.Value[0])
	return nil
}

// MulPlainNew returns ct·pt.
func (ev *Evaluator) MulPlainNew(ct *Ciphertext, pt *Plaintext) (*Ciphertext, error) {
	out := &Ciphertext{Ct: rlwe.NewCiphertext(ev.p.rlwe, 1, ct.Level()), LogT: ct.LogT}
	if err := ev.mulPlain(ct, pt, out, false); err != nil {
		return nil, err
	}
	return out, nil
}

// MulPlainThenAdd sets acc += ct·pt.
func (ev *Evaluator) MulPlainThenAdd(ct *Ciphertext, pt *Plaintext, acc *Ciphertext) error {
	return ev.mulPlain(ct, pt, acc, true)
}

func (ev *Evaluator) mulPlain(ct *Ciphertext, pt *Plaintext, out *Ciphertext, add bool) error {
	ev.ops.MulPlain++
	if pt.LogT != ct.LogT {
		return fmt.Errorf("cheetah: plaintext for 2^%d used with ciphertext for 2^%d", pt.LogT, ct.LogT)
	}
	if pt.Level < ct.Level() || out.Level() != ct.Level() {
		return fmt.Errorf("cheetah: level mismatch (pt %d, ct %d, out %d)", pt.Level, ct.Level(), out.Level())
	}
	rq := ev.p.RingQ().AtLevel(ct.Level())
	nb := MulPlain(ct.Noise, pt.L1)
	if add {
		if out.LogT != ct.LogT {
			return fmt.Errorf("cheetah: accumulator for 2^%d, operand for 2^%d", out.LogT, ct.LogT)
		}
		for i := 0; i < 2; i++ {
			rq.MulCoeffsMontgomeryThenAdd(ct.Ct.Value[i], pt.Value, out.Ct.Value[i])
		}
		out.Noise += nb
		return nil
	}
	for i := 0; i < 2; i++ {
		rq.MulCoeffsMontgomery(ct.Ct.Value[i], pt.Value, out.Ct.Value[i])
	}
	out.Noise = nb
	return nil
}

// Add sets a += b.
func (ev *Evaluator) Add(a, b *Ciphertext) error {
	if err := ev.check2(a, b); err != nil {
		return err
	}
	rq := ev.p.RingQ().AtLevel(a.Level())
	rq.Add(a.Ct.Value[0], b.Ct.Value[0], a.Ct.Value[0])
	rq.Add(a.Ct.Value[1], b.Ct.Value[1], a.Ct.Value[1])
	a.Noise += b.Noise
	return nil
}

// Sub sets a -= b.
func (ev *Evaluator) Sub(a, b *Ciphertext) error {
	if err := ev.check2(a, b); err != nil {
		return err
	}
	rq := ev.p.RingQ().AtLevel(a.Level())
	rq.Sub(a.Ct.Value[0], b.Ct.Value[0], a.Ct.Value[0])
	rq.Sub(a.Ct.Value[1], b.Ct.Value[1], a.Ct.Value[1])
	a.Noise += b.Noise
	return nil
}

// MulMonomialNew returns ct·X^k (k may be negative; X^N = -1). The noise
// norm is unchanged.
func (ev *Evaluator) MulMonomialNew(ct *Ciphertext, k int) *Ciphertext {
	N := ev.p.N()
	k %= 2 * N
	if k < 0 {
		k += 2 * N
	}
	mono, ok := ev.monos[k]
	if !ok {
		rq := ev.p.RingQ()
		mono = rq.NewPoly()
		for i, s := range rq.SubRings {
			if k < N {
				mono.Coeffs[i][k] = 1
			} else {
				mono.Coeffs[i][k-N] = s.Modulus - 1
			}
		}
		rq.NTT(mono, mono)
		rq.MForm(mono, mono)
		ev.monos[k] = mono
	}
	out := &Ciphertext{Ct: rlwe.NewCiphertext(ev.p.rlwe, 1, ct.Level()), LogT: ct.LogT, Noise: ct.Noise}
	rq := ev.p.RingQ().AtLevel(ct.Level())
	rq.MulCoeffsMontgomery(ct.Ct.Value[0], mono, out.Ct.Value[0])
	rq.MulCoeffsMontgomery(ct.Ct.Value[1], mono, out.Ct.Value[1])
	return out
}

// AutomorphismNew returns σ_g(ct): X -> X^g, keyswitched back to the client's
// key with the Galois key for g.
func (ev *Evaluator) AutomorphismNew(ct *Ciphertext, g uint64) (*Ciphertext, error) {
	if err := ev.p.checkGalEl(g); err != nil {
		return nil, err
	}
	ev.ops.Automorphisms++
	out := &Ciphertext{Ct: rlwe.NewCiphertext(ev.p.rlwe, 1, ct.Level()), LogT: ct.LogT}
	if err := ev.eval.Automorphism(ct.Ct, g, out.Ct); err != nil {
		return nil, fmt.Errorf("cheetah: automorphism %d: %w", g, err)
	}
	out.Noise = ct.Noise
	if g != 1 {
		out.Noise += ev.p.KeySwitch(ct.Level())
	}
	return out, nil
}
