package mpcbench

import (
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/internal/timing"
	"github.com/rosemary-fhe/rosemary/optiprime/cheetah"
	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

// Units are measured single-threaded costs of the HE operations a linear
// layer is made of, at one ring degree, at the top level.
type Units struct {
	LogN   int     `json:"log_n"`
	EncS   float64 `json:"enc_s"`    // client: one seeded encryption
	MulS   float64 `json:"cpmult_s"` // server: one plaintext-ciphertext multiply-accumulate
	AutoS  float64 `json:"auto_s"`   // server: one automorphism with key switching
	OutS   float64 `json:"out_s"`    // server re-randomization + compression, client decryption
	Rounds int     `json:"rounds"`   // repetitions each figure is the mean of
}

// MeasureUnits times each operation rounds times (after one warm-up), in
// thread CPU time where available.
func MeasureUnits(params cheetah.Parameters, logT, rounds int) (Units, error) {
	if rounds < 1 {
		return Units{}, fmt.Errorf("bench: rounds %d < 1", rounds)
	}
	keys := cheetah.GenKeys(params)
	n := params.N()
	g := uint64(n + 1) // X → X^(N+1), an automorphism OptiEncode's merge uses
	gks, err := cheetah.GenGaloisKeys(params, keys.SK, []uint64{g})
	if err != nil {
		return Units{}, err
	}
	ev := cheetah.NewEvaluator(params, keys.PK, gks)
	enc := cheetah.NewEncryptor(params, keys.SK)
	dec := cheetah.NewDecryptor(params, keys.SK)
	prg, err := share.NewPRG()
	if err != nil {
		return Units{}, err
	}
	ring, err := share.NewRing(logT)
	if err != nil {
		return Units{}, err
	}
	m := prg.Uniform(ring, n)
	w := make([]uint64, n)
	for i := range w {
		w[i] = uint64(i % 7)
	}
	pt, err := ev.EncodePlain(w, params.MaxLevel(), logT)
	if err != nil {
		return Units{}, err
	}
	ct, _, err := enc.EncryptSeeded(m, logT)
	if err != nil {
		return Units{}, err
	}
	acc, err := ev.MulPlainNew(ct, pt)
	if err != nil {
		return Units{}, err
	}
	keep := make([]int, n)
	for i := range keep {
		keep[i] = i
	}
	u := Units{LogN: params.LogN(), Rounds: rounds}
	timeIt := func(dst *float64, f func() error) error {
		if err := f(); err != nil { // warm-up
			return err
		}
		s, err := timing.Batch(rounds, f)
		*dst = s.CPUOrWall().Seconds() / float64(rounds)
		return err
	}
	if err := timeIt(&u.EncS, func() error { _, _, err := enc.EncryptSeeded(m, logT); return err }); err != nil {
		return Units{}, fmt.Errorf("bench: encrypt: %w", err)
	}
	if err := timeIt(&u.MulS, func() error { return ev.MulPlainThenAdd(ct, pt, acc) }); err != nil {
		return Units{}, fmt.Errorf("bench: multiply: %w", err)
	}
	if err := timeIt(&u.AutoS, func() error { _, err := ev.AutomorphismNew(ct, g); return err }); err != nil {
		return Units{}, fmt.Errorf("bench: automorphism: %w", err)
	}
	if err := timeIt(&u.OutS, func() error {
		c := ct.CopyNew()
		if err := ev.Rerandomize(c, cheetah.DefaultFloodLambda); err != nil {
			return err
		}
		z, err := ev.Compress(c, keep)
		if err != nil {
			return err
		}
		_, err = dec.DecryptCompressed(z, keep)
		return err
	}); err != nil {
		return Units{}, fmt.Errorf("bench: output: %w", err)
	}
	return u, nil
}

// Compute projects a layer's computation time from its counters.
func (u Units) Compute(c linear.Counters) time.Duration {
	s := float64(c.InputCts)*u.EncS + float64(c.CPMults)*u.MulS + float64(c.Automorphisms)*u.AutoS + float64(c.OutputCts)*u.OutS
	return time.Duration(s * float64(time.Second))
}
