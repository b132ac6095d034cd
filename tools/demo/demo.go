// Package demo is the main job `rosemary demo` runs on embedded defaults.
// Search (search.go) is the system end to end: an encrypted MNIST-vector
// database on an in-process device, a nearest-neighbour query encrypted at
// the edge, the Plan split by the compiler between host and device, the
// answer checked by decryption, the bytes moved, and the projection on
// Rosemary hardware. Run (this file) first checks the verified core: HMult,
// Relinearize and a rotation lowered to mPrograms, interpreted, and compared
// bit for bit with Lattigo.
package demo

import (
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Summary is what the demo found.
type Summary struct {
	Preset        string  `json:"preset"`
	LogN          int     `json:"logN"`
	Slots         int     `json:"slots"`
	Rotation      int     `json:"rotation"`
	BitExact      bool    `json:"bitexact_vs_lattigo"`
	MaxError      float64 `json:"max_abs_error"`
	Correct       bool    `json:"correct"`
	Instructions  int     `json:"instructions"`
	MicroOps      int64   `json:"micro_ops"`
	ProgramBytes  int     `json:"mprogram_bytes"`
	KeyBytesRead  int64   `json:"key_bytes_read"`
	InterpretSecs float64 `json:"interpret_s"`
	LattigoSecs   float64 `json:"lattigo_s"`
}

// Run executes the demo on the named CKKS preset and writes a short report
// to w (nil for none).
func Run(w io.Writer, preset string, rotation int) (*Summary, error) {
	if w == nil {
		w = io.Discard
	}
	p, err := fhe.Lookup(preset)
	if err != nil {
		return nil, err
	}
	params, err := p.CKKSParameters()
	if err != nil {
		return nil, err
	}
	s := &Summary{Preset: preset, LogN: params.LogN(), Slots: params.MaxSlots(), Rotation: rotation}
	fmt.Fprintf(w, "Rosemary demo — verified core (preset %s: N=2^%d, %d levels, dnum=%d)\n", preset, params.LogN(), params.MaxLevel(), p.DNum())

	kg := rlwe.NewKeyGenerator(params)
	sk := kg.GenSecretKeyNew()
	rlk := kg.GenRelinearizationKeyNew(sk)
	gal := params.GaloisElement(rotation)
	gk := kg.GenGaloisKeyNew(gal, sk)
	enc := ckks.NewEncoder(params)
	encr := rlwe.NewEncryptor(params, sk)
	dec := rlwe.NewDecryptor(params, sk)
	eval := ckks.NewEvaluator(params, rlwe.NewMemEvaluationKeySet(rlk, gk))

	prng, err := sampling.NewPRNG()
	if err != nil {
		return nil, err
	}
	a, b := randomVector(prng, s.Slots), randomVector(prng, s.Slots)
	cta, err := encryptVec(params, enc, encr, a)
	if err != nil {
		return nil, err
	}
	ctb, err := encryptVec(params, enc, encr, b)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "  client: encrypted two vectors of %d slots\n", s.Slots)

	// Lattigo reference: rotate(a·b, r).
	t0 := time.Now()
	prod, err := eval.MulRelinNew(cta, ctb)
	if err != nil {
		return nil, err
	}
	want, err := eval.RotateNew(prod, rotation)
	if err != nil {
		return nil, err
	}
	s.LattigoSecs = time.Since(t0).Seconds()

	// The same two operations as mPrograms on the interpreter.
	ctx := &lower.Context{Scheme: fhe.CKKS, Ring: lower.RingOf(params.Parameters), Level: params.MaxLevel(), Rotation: rotation}
	mul, err := lower.MulRelin(ctx)
	if err != nil {
		return nil, err
	}
	rot, err := lower.Op(ir.OpHRot, ctx)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	mem := engine.NewMemObjects()
	mem.Set(isa.SpaceDRAM, mul.Inputs[0].ID, engine.PolyLimbs(cta.Value, cta.Level()+1))
	mem.Set(isa.SpaceDRAM, mul.Inputs[1].ID, engine.PolyLimbs(ctb.Value, ctb.Level()+1))
	mem.Set(isa.SpaceNAND, mul.Keys[0].ID, engine.KeyLimbs(&rlk.GadgetCiphertext))
	st1, err := runOn(mul.Program, mem)
	if err != nil {
		return nil, fmt.Errorf("demo: HMult+Relinearize: %w", err)
	}
	// The product becomes the rotation's input; the Galois key replaces rlk.
	mem.Set(isa.SpaceDRAM, rot.Inputs[0].ID, mem.Get(isa.SpaceDRAM, mul.Output.ID))
	mem.Set(isa.SpaceNAND, rot.Keys[0].ID, engine.KeyLimbs(&gk.GadgetCiphertext))
	st2, err := runOn(rot.Program, mem)
	if err != nil {
		return nil, fmt.Errorf("demo: HRot: %w", err)
	}
	s.InterpretSecs = time.Since(t0).Seconds()
	s.Instructions = len(mul.Program.Code) + len(rot.Program.Code)
	s.ProgramBytes = mul.Program.Size() + rot.Program.Size()
	s.MicroOps = st1.MicroOps + st2.MicroOps
	s.KeyBytesRead = st1.BytesRead[isa.SpaceNAND] + st2.BytesRead[isa.SpaceNAND]

	got := want.CopyNew()
	out := mem.Get(isa.SpaceDRAM, rot.Output.ID)
	s.BitExact = true
	for p := 0; p < 2; p++ {
		for i := 0; i <= want.Level(); i++ {
			lim := out[p*(want.Level()+1)+i]
			for c, v := range want.Value[p].Coeffs[i] {
				if lim[c] != v {
					s.BitExact = false
				}
			}
			copy(got.Value[p].Coeffs[i], lim)
		}
	}

	vals := make([]complex128, s.Slots)
	if err := enc.Decode(dec.DecryptNew(got), vals); err != nil {
		return nil, err
	}
	for i := range vals {
		ref := a[(i+rotation)%s.Slots] * b[(i+rotation)%s.Slots]
		s.MaxError = math.Max(s.MaxError, cmplx.Abs(vals[i]-ref))
	}
	s.Correct = s.BitExact && s.MaxError < 1e-4
	fmt.Fprintf(w, "  engine: %d mProgram instructions (%d bytes), %d micro-ops, %.1f MB of keys read from NAND, %.2f s (measured here, interpreter)\n",
		s.Instructions, s.ProgramBytes, s.MicroOps, float64(s.KeyBytesRead)/1e6, s.InterpretSecs)
	fmt.Fprintf(w, "  Lattigo evaluator on the same inputs: %.2f s (measured here)\n", s.LattigoSecs)
	fmt.Fprintf(w, "  bit-identical to Lattigo: %v; decrypted rotate(a·b, %d) vs plaintext: max error %.2e\n", s.BitExact, rotation, s.MaxError)
	if s.Correct {
		fmt.Fprintln(w, "  result: CORRECT")
	} else {
		fmt.Fprintln(w, "  result: WRONG")
	}
	return s, nil
}

func runOn(p *isa.Program, mem *engine.MemObjects) (engine.Stats, error) {
	m, err := engine.NewMachine(p.Config, mem)
	if err != nil {
		return engine.Stats{}, err
	}
	return m.Run(p)
}

func randomVector(prng sampling.PRNG, n int) []complex128 {
	v := make([]complex128, n)
	var buf [8]byte
	for i := range v {
		_, _ = prng.Read(buf[:])
		x := uint64(0)
		for _, c := range buf {
			x = x<<8 | uint64(c)
		}
		v[i] = complex(2*float64(x>>11)/(1<<53)-1, 0)
	}
	return v
}

func encryptVec(params ckks.Parameters, enc *ckks.Encoder, encr *rlwe.Encryptor, v []complex128) (*rlwe.Ciphertext, error) {
	pt := ckks.NewPlaintext(params, params.MaxLevel())
	if err := enc.Encode(v, pt); err != nil {
		return nil, err
	}
	return encr.EncryptNew(pt)
}
