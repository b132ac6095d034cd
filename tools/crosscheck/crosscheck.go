package crosscheck

import (
	"fmt"
	"math"
	"math/big"
	"math/cmplx"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Result is the outcome for one operation.
type Result struct {
	Op           string `json:"op"`
	Scheme       string `json:"scheme"`
	Preset       string `json:"preset"`
	LogN         int    `json:"logN"`
	DNum         int    `json:"dnum"`
	Level        int    `json:"level"`
	BitExact     bool   `json:"bitexact"`
	Decrypts     bool   `json:"decrypts"`
	MicroOps     int64  `json:"micro_ops"`
	Instructions int    `json:"instructions"`
	ProgramBytes int    `json:"program_bytes"`
	Error        string `json:"error,omitempty"`
}

// Ops are the operations the check covers, in order.
var Ops = []ir.Op{ir.OpHAdd, ir.OpHSub, ir.OpPMult, ir.OpCMult, ir.OpHMult, ir.OpRelinearize, "HMult+Relinearize", ir.OpHRot, ir.OpConjugate, ir.OpRescale}

// Ops returns the operations checked for the environment's scheme: Ops,
// and for BGV also PMult by a compact stored plaintext.
func (e *Env) Ops() []ir.Op {
	ops := append([]ir.Op(nil), Ops...)
	if e.Preset.Scheme == fhe.BGV {
		ops = append(ops, lower.OpPMultCompact)
	} else {
		ops = append(ops, ir.OpModRaise)
	}
	return ops
}

// RotationSteps is the HRot amount used by the check.
const RotationSteps = 5

// Env holds the keys and Lattigo objects for one preset.
type Env struct {
	Preset fhe.Preset
	Params rlwe.Parameters
	ckks   ckks.Parameters
	bgv    bgv.Parameters
	sk     *rlwe.SecretKey
	rlk    *rlwe.RelinearizationKey
	gks    map[uint64]*rlwe.GaloisKey
	enc    *rlwe.Encryptor
	dec    *rlwe.Decryptor
	ckEnc  *ckks.Encoder
	bgEnc  *bgv.Encoder
	ckEval *ckks.Evaluator
	bgEval *bgv.Evaluator
	prng   sampling.PRNG

	// tamper flips one bit of the evaluation key handed to the interpreter
	// (tests use it to show that the comparison can fail).
	tamper bool
}

// NewEnv generates keys for the named preset.
func NewEnv(preset string) (*Env, error) {
	p, err := fhe.Lookup(preset)
	if err != nil {
		return nil, err
	}
	e := &Env{Preset: p, gks: map[uint64]*rlwe.GaloisKey{}}
	if e.prng, err = sampling.NewPRNG(); err != nil {
		return nil, err
	}
	switch p.Scheme {
	case fhe.CKKS:
		if e.ckks, err = p.CKKSParameters(); err != nil {
			return nil, err
		}
		e.Params = e.ckks.Parameters
	case fhe.BGV:
		if e.bgv, err = p.BGVParameters(); err != nil {
			return nil, err
		}
		e.Params = e.bgv.Parameters
	}
	kg := rlwe.NewKeyGenerator(e.Params)
	e.sk = kg.GenSecretKeyNew()
	e.rlk = kg.GenRelinearizationKeyNew(e.sk)
	for _, g := range []uint64{e.Params.GaloisElement(RotationSteps), e.Params.GaloisElementOrderTwoOrthogonalSubgroup()} {
		e.gks[g] = kg.GenGaloisKeyNew(g, e.sk)
	}
	gks := make([]*rlwe.GaloisKey, 0, len(e.gks))
	for _, g := range e.gks {
		gks = append(gks, g)
	}
	evk := rlwe.NewMemEvaluationKeySet(e.rlk, gks...)
	e.enc = rlwe.NewEncryptor(e.Params, e.sk)
	e.dec = rlwe.NewDecryptor(e.Params, e.sk)
	if p.Scheme == fhe.CKKS {
		e.ckEnc = ckks.NewEncoder(e.ckks)
		e.ckEval = ckks.NewEvaluator(e.ckks, evk)
	} else {
		e.bgEnc = bgv.NewEncoder(e.bgv)
		e.bgEval = bgv.NewEvaluator(e.bgv, evk)
	}
	return e, nil
}

// message is a plaintext vector in either scheme.
type message struct {
	c []complex128
	u []uint64
}

func (e *Env) randomMessage() message {
	var m message
	if e.Preset.Scheme == fhe.CKKS {
		n := e.ckks.MaxSlots()
		m.c = make([]complex128, n)
		for i := range m.c {
			m.c[i] = complex(2*randFloat(e.prng)-1, 0)
		}
	} else {
		t := e.bgv.PlaintextModulus()
		m.u = make([]uint64, e.bgv.MaxSlots())
		for i := range m.u {
			m.u[i] = randU64(e.prng) % t
		}
	}
	return m
}

func randU64(p sampling.PRNG) uint64 {
	var b [8]byte
	_, _ = p.Read(b[:])
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

func randFloat(p sampling.PRNG) float64 { return float64(randU64(p)>>11) / (1 << 53) }

func (e *Env) encode(m message, level int) (*rlwe.Plaintext, error) {
	if e.Preset.Scheme == fhe.CKKS {
		pt := ckks.NewPlaintext(e.ckks, level)
		return pt, e.ckEnc.Encode(m.c, pt)
	}
	pt := bgv.NewPlaintext(e.bgv, level)
	return pt, e.bgEnc.Encode(m.u, pt)
}

func (e *Env) encrypt(m message, level int) (*rlwe.Ciphertext, error) {
	pt, err := e.encode(m, level)
	if err != nil {
		return nil, err
	}
	return e.enc.EncryptNew(pt)
}

// Check lowers op at the top level, runs it on the interpreter and compares
// with Lattigo.
func (e *Env) Check(op ir.Op) Result { return e.CheckAt(op, e.Params.MaxLevel()) }

// CheckAt is Check with operands at the given level.
func (e *Env) CheckAt(op ir.Op, level int) Result {
	r := Result{Op: string(op), Scheme: string(e.Preset.Scheme), Preset: e.Preset.Name, LogN: e.Params.LogN(),
		DNum: e.Preset.DNum(), Level: level}
	if err := e.check(op, level, &r); err != nil {
		r.Error = err.Error()
	}
	return r
}

func (e *Env) check(op ir.Op, level int, r *Result) error {
	m0, m1 := e.randomMessage(), e.randomMessage()
	ct0, err := e.encrypt(m0, level)
	if err != nil {
		return err
	}
	ct1, err := e.encrypt(m1, level)
	if err != nil {
		return err
	}
	ctx := &lower.Context{Scheme: e.Preset.Scheme, Ring: lower.RingOf(e.Params), T: e.Preset.T, Level: level, Rotation: RotationSteps}

	var want *rlwe.Ciphertext
	var ref message
	inputs := []*rlwe.Ciphertext{ct0, ct1}
	var ptIn *rlwe.Plaintext
	var key *rlwe.GadgetCiphertext
	ck, bg := e.ckEval, e.bgEval
	isCKKS := e.Preset.Scheme == fhe.CKKS
	do := func(f func() (*rlwe.Ciphertext, error)) {
		if err == nil {
			want, err = f()
		}
	}
	switch op {
	case ir.OpHAdd, ir.OpHSub:
		sign := 1.0
		if op == ir.OpHSub {
			sign = -1
		}
		ref = combine(m0, m1, e, func(a, b complex128) complex128 { return a + complex(sign, 0)*b },
			func(a, b uint64) uint64 {
				if sign < 0 {
					return a + e.bgv.PlaintextModulus() - b
				}
				return a + b
			})
		if isCKKS {
			do(func() (*rlwe.Ciphertext, error) {
				if op == ir.OpHAdd {
					return ck.AddNew(ct0, ct1)
				}
				return ck.SubNew(ct0, ct1)
			})
		} else {
			do(func() (*rlwe.Ciphertext, error) {
				if op == ir.OpHAdd {
					return bg.AddNew(ct0, ct1)
				}
				return bg.SubNew(ct0, ct1)
			})
		}
	case ir.OpPMult, lower.OpPMultCompact:
		if op == lower.OpPMultCompact && isCKKS {
			return fmt.Errorf("compact plaintexts are BGV only")
		}
		if ptIn, err = e.encode(m1, level); err != nil {
			return err
		}
		inputs = []*rlwe.Ciphertext{ct0}
		ref = combine(m0, m1, e, func(a, b complex128) complex128 { return a * b }, func(a, b uint64) uint64 { return mulmod(a, b, e.bgv.PlaintextModulus()) })
		if isCKKS {
			do(func() (*rlwe.Ciphertext, error) { return ck.MulNew(ct0, ptIn) })
		} else {
			do(func() (*rlwe.Ciphertext, error) { return bg.MulNew(ct0, ptIn) })
		}
	case ir.OpCMult:
		inputs = []*rlwe.Ciphertext{ct0}
		if isCKKS {
			const c = 0.7
			ctx.Constant, _ = lower.CKKSConstant(e.ckks, level, c)
			ref = combine(m0, m0, e, func(a, _ complex128) complex128 { return a * c }, nil)
			do(func() (*rlwe.Ciphertext, error) { return ck.MulNew(ct0, c) })
		} else {
			const c = 3
			ctx.Constant = lower.BGVConstant(e.bgv, level, c)
			ref = combine(m0, m0, e, nil, func(a, _ uint64) uint64 { return mulmod(a, c, e.bgv.PlaintextModulus()) })
			do(func() (*rlwe.Ciphertext, error) { return bg.MulNew(ct0, uint64(c)) })
		}
	case ir.OpHMult, ir.OpRelinearize, "HMult+Relinearize", ir.OpRescale:
		ref = combine(m0, m1, e, func(a, b complex128) complex128 { return a * b }, func(a, b uint64) uint64 { return mulmod(a, b, e.bgv.PlaintextModulus()) })
		var prod *rlwe.Ciphertext
		if isCKKS {
			prod, err = ck.MulNew(ct0, ct1)
		} else {
			prod, err = bg.MulNew(ct0, ct1)
		}
		if err != nil {
			return err
		}
		switch op {
		case ir.OpHMult:
			want = prod
		case ir.OpRelinearize:
			inputs = []*rlwe.Ciphertext{prod}
			key = &e.rlk.GadgetCiphertext
			if isCKKS {
				do(func() (*rlwe.Ciphertext, error) { return ck.RelinearizeNew(prod) })
			} else {
				do(func() (*rlwe.Ciphertext, error) { return bg.RelinearizeNew(prod) })
			}
		case ir.OpRescale:
			var rl *rlwe.Ciphertext
			if isCKKS {
				rl, err = ck.MulRelinNew(ct0, ct1)
			} else {
				rl, err = bg.MulRelinNew(ct0, ct1)
			}
			if err != nil {
				return err
			}
			inputs = []*rlwe.Ciphertext{rl}
			if isCKKS {
				do(func() (*rlwe.Ciphertext, error) {
					out := ckks.NewCiphertext(e.ckks, 1, level-1)
					return out, ck.Rescale(rl, out)
				})
			} else {
				do(func() (*rlwe.Ciphertext, error) {
					out := bgv.NewCiphertext(e.bgv, 1, level-1)
					return out, bg.Rescale(rl, out)
				})
			}
		default:
			key = &e.rlk.GadgetCiphertext
			if isCKKS {
				do(func() (*rlwe.Ciphertext, error) { return ck.MulRelinNew(ct0, ct1) })
			} else {
				do(func() (*rlwe.Ciphertext, error) { return bg.MulRelinNew(ct0, ct1) })
			}
		}
	case ir.OpHRot, ir.OpConjugate:
		inputs = []*rlwe.Ciphertext{ct0}
		if op == ir.OpHRot {
			key = &e.gks[e.Params.GaloisElement(RotationSteps)].GadgetCiphertext
			ref = e.rotate(m0, RotationSteps)
			if isCKKS {
				do(func() (*rlwe.Ciphertext, error) { return ck.RotateNew(ct0, RotationSteps) })
			} else {
				do(func() (*rlwe.Ciphertext, error) { return bg.RotateColumnsNew(ct0, RotationSteps) })
			}
		} else {
			key = &e.gks[e.Params.GaloisElementOrderTwoOrthogonalSubgroup()].GadgetCiphertext
			ref = e.conjugate(m0)
			if isCKKS {
				do(func() (*rlwe.Ciphertext, error) { return ck.ConjugateNew(ct0) })
			} else {
				do(func() (*rlwe.Ciphertext, error) { return bg.RotateRowsNew(ct0) })
			}
		}
	case ir.OpModRaise:
		if !isCKKS {
			return fmt.Errorf("ModRaise is a step of CKKS bootstrapping")
		}
		if level < 1 {
			return fmt.Errorf("ModRaise needs a target level of at least 1")
		}
		// The input is at level 0; the operation lifts it to level.
		if inputs[0], err = e.encrypt(m0, 0); err != nil {
			return err
		}
		inputs = inputs[:1]
		ctx.Level, ctx.TargetLevel = 0, level
		ref = m0
		if want, err = e.modUp(inputs[0], level); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no check for %s", op)
	}
	if err != nil {
		return fmt.Errorf("lattigo: %w", err)
	}
	if op == ir.OpRescale {
		ctx.Level = inputs[0].Level()
	}

	low, err := lower.Op(op, ctx)
	if err != nil {
		return err
	}
	r.Instructions = len(low.Program.Code)
	r.ProgramBytes = low.Program.Size()
	mem := engine.NewMemObjects()
	for i, obj := range low.Inputs {
		if obj.Role == "pt" && op == lower.OpPMultCompact {
			m, err := fhe.CompactBGV(e.bgv, ptIn)
			if err != nil {
				return err
			}
			mem.Set(obj.Space, obj.ID, [][]uint64{m})
			continue
		}
		if obj.Role == "pt" {
			mem.Set(obj.Space, obj.ID, engine.PolyLimbs([]ring.Poly{ptIn.Value}, obj.Limbs))
			continue
		}
		mem.Set(obj.Space, obj.ID, engine.PolyLimbs(inputs[i].Value, obj.Limbs))
	}
	if len(low.Keys) > 0 {
		limbs := engine.KeyLimbs(key)
		if e.tamper {
			limbs[0] = append([]uint64(nil), limbs[0]...)
			limbs[0][0] ^= 1
		}
		mem.Set(low.Keys[0].Space, low.Keys[0].ID, limbs)
	}
	mach, err := engine.NewMachine(low.Program.Config, mem)
	if err != nil {
		return err
	}
	st, err := mach.Run(low.Program)
	if err != nil {
		return err
	}
	r.MicroOps = st.MicroOps
	out := mem.Get(low.Output.Space, low.Output.ID)
	got := want.CopyNew()
	r.BitExact = len(out) == low.Output.Polys*low.Output.Limbs && len(got.Value) == low.Output.Polys
	for p := 0; r.BitExact && p < low.Output.Polys; p++ {
		for i := 0; i < low.Output.Limbs; i++ {
			lim := out[p*low.Output.Limbs+i]
			for c, v := range want.Value[p].Coeffs[i] {
				if lim[c] != v {
					r.BitExact = false
					break
				}
			}
			copy(got.Value[p].Coeffs[i], lim)
		}
	}
	if op == ir.OpModRaise {
		r.Decrypts, err = e.raisedDecryptsTo(got, ref)
		return err
	}
	r.Decrypts, err = e.decryptsTo(got, ref)
	return err
}

// modUp is the lift of Lattigo's CKKS bootstrapping ModUp (engine.ModRaise:
// the branch without sparse keys, written with Lattigo's ring primitives;
// Lattigo's own method also scales the message and applies a trace, which
// are separate operations in our IR, so it cannot be called as it stands —
// bootconst compares the whole step with it).
func (e *Env) modUp(ct *rlwe.Ciphertext, level int) (*rlwe.Ciphertext, error) {
	return engine.ModRaise(e.Params, ct, level)
}

// raisedDecryptsTo checks what a ModRaise output means: c_0 + c_1·s over
// q_0…q_level is Δ·m + e + q_0·I with a small integer polynomial I (|I| ≤
// (1 + ‖s‖_1)/2 for any lift of small representatives; we accept |I| ≤ N,
// while a wrong lift leaves I uniform over about q_1), and limb 0 alone
// still decrypts to m.
func (e *Env) raisedDecryptsTo(ct *rlwe.Ciphertext, ref message) (bool, error) {
	lv := ct.Level()
	rq := e.Params.RingQ().AtLevel(lv)
	pt := e.dec.DecryptNew(ct)
	d := rq.NewPoly()
	rq.INTT(pt.Value, d)
	q0, q1 := new(big.Int).SetUint64(rq.SubRings[0].Modulus), new(big.Int).SetUint64(rq.SubRings[1].Modulus)
	q01 := new(big.Int).Mul(q0, q1)
	inv := new(big.Int).ModInverse(q0, q1) // CRT: x = a + q0·((b − a)·q0⁻¹ mod q1)
	bound := big.NewInt(int64(e.Params.N()))
	var a, b, x, k, half0, half01 big.Int
	half0.Rsh(q0, 1)
	half01.Rsh(q01, 1)
	for j := range d.Coeffs[0] {
		a.SetUint64(d.Coeffs[0][j])
		b.SetUint64(d.Coeffs[1][j])
		k.Sub(&b, &a).Mul(&k, inv).Mod(&k, q1)
		x.Mul(&k, q0).Add(&x, &a)
		if x.Cmp(&half01) > 0 {
			x.Sub(&x, q01)
		}
		if a.Cmp(&half0) > 0 {
			a.Sub(&a, q0)
		}
		k.Sub(&x, &a).Quo(&k, q0) // exact: x ≡ a mod q0
		if k.CmpAbs(bound) > 0 {
			return false, nil
		}
	}
	low := ct.CopyNew()
	low.Resize(low.Degree(), 0)
	return e.decryptsTo(low, ref)
}

func mulmod(a, b, t uint64) uint64 { return (a % t) * (b % t) % t }

func combine(a, b message, e *Env, fc func(x, y complex128) complex128, fu func(x, y uint64) uint64) message {
	var m message
	if a.c != nil {
		m.c = make([]complex128, len(a.c))
		for i := range m.c {
			m.c[i] = fc(a.c[i], b.c[i])
		}
	} else {
		t := e.bgv.PlaintextModulus()
		m.u = make([]uint64, len(a.u))
		for i := range m.u {
			m.u[i] = fu(a.u[i], b.u[i]) % t
		}
	}
	return m
}

func (e *Env) rotate(m message, k int) message {
	var out message
	if m.c != nil {
		n := len(m.c)
		out.c = make([]complex128, n)
		for i := range out.c {
			out.c[i] = m.c[(i+k)%n]
		}
		return out
	}
	half := len(m.u) / 2
	out.u = make([]uint64, len(m.u))
	for row := 0; row < 2; row++ {
		for i := 0; i < half; i++ {
			out.u[row*half+i] = m.u[row*half+(i+k)%half]
		}
	}
	return out
}

func (e *Env) conjugate(m message) message {
	var out message
	if m.c != nil {
		out.c = make([]complex128, len(m.c))
		for i, v := range m.c {
			out.c[i] = cmplx.Conj(v)
		}
		return out
	}
	half := len(m.u) / 2
	out.u = append(append([]uint64(nil), m.u[half:]...), m.u[:half]...)
	return out
}

func (e *Env) decryptsTo(ct *rlwe.Ciphertext, ref message) (bool, error) {
	pt := e.dec.DecryptNew(ct)
	if ref.c != nil {
		got := make([]complex128, len(ref.c))
		if err := e.ckEnc.Decode(pt, got); err != nil {
			return false, err
		}
		for i := range got {
			if d := cmplx.Abs(got[i] - ref.c[i]); d > 1e-3 || math.IsNaN(d) {
				return false, nil
			}
		}
		return true, nil
	}
	got := make([]uint64, len(ref.u))
	if err := e.bgEnc.Decode(pt, got); err != nil {
		return false, err
	}
	for i := range got {
		if got[i] != ref.u[i] {
			return false, nil
		}
	}
	return true, nil
}
