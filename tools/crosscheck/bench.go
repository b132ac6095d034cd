package crosscheck

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/internal/timing"
)

// OpTiming compares one whole operation: Lattigo's evaluator against the
// lowered mProgram on the interpreter, single-threaded, same inputs.
type OpTiming struct {
	Op        string  `json:"kernel"`
	Preset    string  `json:"preset"`
	LogN      int     `json:"logN"`
	Levels    int     `json:"levels"`
	OursNs    float64 `json:"ours_ns"`
	LattigoNs float64 `json:"lattigo_ns"`
	Speedup   float64 `json:"speedup"`
	MicroOps  int64   `json:"micro_ops"`
}

// Runner holds a lowered operation ready to run repeatedly on the
// interpreter, and the matching Lattigo call.
type Runner struct {
	Op      ir.Op
	machine *engine.Machine
	low     *lower.Program
	lattigo func() error
}

// NewRunner prepares op (HRot or HMult+Relinearize) at the top level.
func (e *Env) NewRunner(op ir.Op) (*Runner, error) {
	if e.Preset.Scheme != fhe.CKKS {
		return nil, fmt.Errorf("crosscheck: timing runs use CKKS presets")
	}
	m0, m1 := e.randomMessage(), e.randomMessage()
	ct0, err := e.encrypt(m0, e.Params.MaxLevel())
	if err != nil {
		return nil, err
	}
	ct1, err := e.encrypt(m1, e.Params.MaxLevel())
	if err != nil {
		return nil, err
	}
	ctx := &lower.Context{Scheme: fhe.CKKS, Ring: lower.RingOf(e.Params), Level: e.Params.MaxLevel(), Rotation: RotationSteps}
	out := rlwe.NewCiphertext(e.Params, 1, e.Params.MaxLevel())
	r := &Runner{Op: op}
	var key *rlwe.GadgetCiphertext
	inputs := []*rlwe.Ciphertext{ct0, ct1}
	switch op {
	case "HMult+Relinearize":
		r.low, err = lower.MulRelin(ctx)
		key = &e.rlk.GadgetCiphertext
		r.lattigo = func() error { return e.ckEval.MulRelin(ct0, ct1, out) }
	case ir.OpHRot:
		r.low, err = lower.Op(op, ctx)
		key = &e.gks[e.Params.GaloisElement(RotationSteps)].GadgetCiphertext
		inputs = inputs[:1]
		r.lattigo = func() error { return e.ckEval.Rotate(ct0, RotationSteps, out) }
	default:
		return nil, fmt.Errorf("crosscheck: no timing run for %s", op)
	}
	if err != nil {
		return nil, err
	}
	mem := engine.NewMemObjects()
	for i, obj := range r.low.Inputs {
		mem.Set(obj.Space, obj.ID, engine.PolyLimbs(inputs[i].Value[:obj.Polys], obj.Limbs))
	}
	mem.Set(r.low.Keys[0].Space, r.low.Keys[0].ID, engine.KeyLimbs(key))
	if r.machine, err = engine.NewMachine(r.low.Program.Config, mem); err != nil {
		return nil, err
	}
	return r, nil
}

// Ours runs the mProgram once.
func (r *Runner) Ours() (engine.Stats, error) { return r.machine.Run(r.low.Program) }

// Lattigo runs Lattigo's evaluator once.
func (r *Runner) Lattigo() error { return r.lattigo() }

// TimeOps measures HMult+Relinearize and HRot on the named CKKS preset,
// iters runs each (after one warm-up), interleaving ours and Lattigo's.
func TimeOps(preset string, iters int) ([]OpTiming, error) {
	env, err := NewEnv(preset)
	if err != nil {
		return nil, err
	}
	var out []OpTiming
	for _, op := range []ir.Op{"HMult+Relinearize", ir.OpHRot} {
		r, err := env.NewRunner(op)
		if err != nil {
			return nil, err
		}
		st, err := r.Ours()
		if err != nil {
			return nil, err
		}
		if err := r.Lattigo(); err != nil {
			return nil, err
		}
		total, err := timing.Alternate(iters, func() error { _, err := r.Ours(); return err }, r.Lattigo)
		if err != nil {
			return nil, err
		}
		ours, lat := total[0], total[1]
		o := float64(ours.Nanoseconds()) / float64(iters)
		l := float64(lat.Nanoseconds()) / float64(iters)
		out = append(out, OpTiming{Op: string(op), Preset: preset, LogN: env.Params.LogN(), Levels: env.Params.MaxLevel(),
			OursNs: o, LattigoNs: l, Speedup: l / o, MicroOps: st.MicroOps})
	}
	return out, nil
}
