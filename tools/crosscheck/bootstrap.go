package crosscheck

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler/bootconst"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// OpBootstrap is the name of the whole-bootstrapping check in a Result.
const OpBootstrap = "Bootstrap"

// BootstrapTolerance is the largest decryption error the bootstrapping
// check accepts (Lattigo's own reaches about 2^-25 on these parameters).
const BootstrapTolerance = 1e-3

// CheckBootstrap runs one whole CKKS bootstrapping on the interpreter —
// Lattigo v6's default circuit at logN 10, 11 or 12 with 2^logSlots slots
// (bootconst.NewTestKeySet), expanded by compiler.ExpandBoot, every node on
// the device, constants and DFT diagonals from Lattigo's evaluator — and
// compares it with Lattigo's Evaluate of the same ciphertext: bit for bit,
// and decrypted against the plaintext within BootstrapTolerance.
func CheckBootstrap(logN, logSlots int) Result {
	r := Result{Op: fmt.Sprintf("%s(2^%d slots)", OpBootstrap, logSlots), Scheme: string(fhe.CKKS), Preset: bootconst.TestPreset(logN), LogN: logN}
	if err := checkBootstrap(logN, logSlots, &r); err != nil {
		r.Error = err.Error()
	}
	return r
}

func checkBootstrap(logN, logSlots int, r *Result) error {
	k, err := bootconst.NewTestKeySet(logN, logSlots)
	if err != nil {
		return err
	}
	r.LogN, r.DNum = k.Params.LogN(), k.Preset.DNum()
	p, err := k.Program()
	if err != nil {
		return err
	}
	slots := 1 << logSlots
	want := make([]complex128, slots)
	for i := range want {
		want[i] = complex(0.5*math.Sin(float64(i)), 0.25*math.Cos(float64(i)))
	}
	ecd := ckks.NewEncoder(k.Params)
	pt := ckks.NewPlaintext(k.Params, 0)
	pt.LogDimensions = ring.Dimensions{Rows: 0, Cols: logSlots}
	if err := ecd.Encode(want, pt); err != nil {
		return err
	}
	ct, err := rlwe.NewEncryptor(k.Params, k.Sk).EncryptNew(pt)
	if err != nil {
		return err
	}
	x, err := k.Executor(func(int) bool { return true }, true)
	if err != nil {
		return err
	}
	stored, err := k.Provider.Stored(p)
	if err != nil {
		return err
	}
	out, err := x.Run(context.Background(), p, map[string][]engine.Value{"x": {{Ct: ct.CopyNew()}}}, stored)
	if err != nil {
		return err
	}
	got := out["y"][0].Ct
	r.Level, r.MicroOps = got.Level(), x.Stats.DeviceMicroOps
	ref, err := k.Eval.Evaluate(ct.CopyNew())
	if err != nil {
		return fmt.Errorf("lattigo: %w", err)
	}
	r.BitExact = SameCiphertext(got, ref)
	dec := make([]complex128, slots)
	if err := ecd.Decode(rlwe.NewDecryptor(k.Params, k.Sk).DecryptNew(got), dec); err != nil {
		return err
	}
	r.Decrypts = true
	for i := range dec {
		if d := cmplx.Abs(dec[i] - want[i]); d > BootstrapTolerance || math.IsNaN(d) {
			r.Decrypts = false
		}
	}
	return nil
}

// SameCiphertext reports whether a and b are equal limb for limb, in
// level, degree and scale.
func SameCiphertext(a, b *rlwe.Ciphertext) bool {
	if a.Level() != b.Level() || a.Degree() != b.Degree() || a.Scale.Cmp(b.Scale) != 0 {
		return false
	}
	for p := range a.Value {
		for i := range a.Value[p].Coeffs {
			for j, v := range a.Value[p].Coeffs[i] {
				if b.Value[p].Coeffs[i][j] != v {
					return false
				}
			}
		}
	}
	return true
}
