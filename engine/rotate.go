package engine

import (
	"fmt"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Rotator rotates the slot columns of BGV ciphertexts with a fixed set of
// Galois keys by running HRot mPrograms on the interpreter: the fhe/rns
// kernels, bit for bit what Lattigo's evaluator computes and 2–4× faster
// (BENCHMARKS.md, "Verified core"). The LWE PIR's ring stage uses it for
// its ~100 key switches per query. A Rotator is not safe for concurrent
// use; each query makes its own.
type Rotator struct {
	bp    bgv.Parameters
	hoist *bgv.Evaluator // Lattigo's, for hoisted rotations (built at the first)
	ring  lower.Ring
	t     uint64
	keys  map[int]*rlwe.GaloisKey
	runs  map[[2]int]*rotation // by (k, level)
	sram  [][]uint64           // shared by the rotations' machines: they never run at once
}

type rotation struct {
	low *lower.Program
	mem *MemObjects
	m   *Machine
}

// NewRotator returns a rotator for ciphertexts of bp with keys by rotation
// amount (each key must rotate by its amount; RotateColumns checks).
func NewRotator(bp bgv.Parameters, keys map[int]*rlwe.GaloisKey) *Rotator {
	return &Rotator{bp: bp, ring: lower.RingOf(bp.Parameters), t: bp.PlaintextModulus(), keys: keys, runs: map[[2]int]*rotation{}}
}

// RotateColumns sets out to in with its columns rotated left by k. out may
// be in.
func (r *Rotator) RotateColumns(in *rlwe.Ciphertext, k int, out *rlwe.Ciphertext) error {
	if in.Degree() != 1 || out.Degree() != 1 || !in.IsNTT || out.Level() != in.Level() {
		return fmt.Errorf("engine: rotate: a degree-1 NTT ciphertext into one of its level")
	}
	run, err := r.rotation(k, in.Level())
	if err != nil {
		return err
	}
	limbs := in.Level() + 1
	run.mem.Set(run.low.Inputs[0].Space, run.low.Inputs[0].ID, PolyLimbs(in.Value, limbs))
	if _, err := run.m.Run(run.low.Program); err != nil {
		return fmt.Errorf("engine: rotate by %d: %w", k, err)
	}
	if !CopyLimbs(run.mem.Get(run.low.Output.Space, run.low.Output.ID), out.Value, limbs) {
		return fmt.Errorf("engine: rotate by %d: the program's output is not a ciphertext of the input's shape", k)
	}
	*out.MetaData = *in.MetaData
	return nil
}

// RotateColumnsHoisted sets outs[i] to in rotated by ks[i], decomposing in
// once (lwepir.HoistingRotator): with Lattigo's evaluator (DecomposeNTT,
// AutomorphismHoisted), as no lowered program shares a decomposition
// between rotations.
func (r *Rotator) RotateColumnsHoisted(in *rlwe.Ciphertext, ks []int, outs []*rlwe.Ciphertext) error {
	if r.hoist == nil {
		var gks []*rlwe.GaloisKey
		for _, k := range r.keys {
			gks = append(gks, k)
		}
		r.hoist = bgv.NewEvaluator(r.bp, rlwe.NewMemEvaluationKeySet(nil, gks...))
	}
	for _, k := range ks {
		if key := r.keys[k]; key == nil || key.GaloisElement != r.bp.GaloisElementForColRotation(k) {
			return fmt.Errorf("engine: no Galois key for a rotation by %d", k)
		}
	}
	level := in.Level()
	decomp := r.hoist.GetBuffDecompQP()
	r.hoist.DecomposeNTT(level, r.bp.MaxLevelP(), r.bp.PCount(), in.Value[1], in.IsNTT, decomp)
	for i, k := range ks {
		if err := r.hoist.AutomorphismHoisted(level, in, decomp, r.bp.GaloisElementForColRotation(k), outs[i]); err != nil {
			return fmt.Errorf("engine: hoisted rotation by %d: %w", k, err)
		}
	}
	return nil
}

// rotation builds (once per amount and level) the machine that rotates by k.
func (r *Rotator) rotation(k, level int) (*rotation, error) {
	if run, ok := r.runs[[2]int{k, level}]; ok {
		return run, nil
	}
	key := r.keys[k]
	if key == nil {
		return nil, fmt.Errorf("engine: no Galois key for a rotation by %d", k)
	}
	low, err := hrotProgram(r.ring, r.t, level, k)
	if err != nil {
		return nil, err
	}
	if key.GaloisElement != low.GaloisElement {
		return nil, fmt.Errorf("engine: the key of the rotation by %d rotates otherwise", k)
	}
	kl := KeyLimbs(&key.GadgetCiphertext)
	if len(low.Keys) != 1 || len(kl) != low.Keys[0].Polys*low.Keys[0].Limbs {
		return nil, fmt.Errorf("engine: the key of the rotation by %d has %d limbs, not the program's", k, len(kl))
	}
	mem := NewMemObjects()
	mem.Set(low.Keys[0].Space, low.Keys[0].ID, kl)
	m, err := NewMachineSlots(low.Program.Config, mem, r.sram)
	if err != nil {
		return nil, err
	}
	if len(r.sram) < len(m.sramOwn) {
		r.sram = m.sramOwn
	}
	run := &rotation{low: low, mem: mem, m: m}
	r.runs[[2]int{k, level}] = run
	return run, nil
}

// hrotPrograms caches lowered rotations: a program depends only on the
// ring, the level and the amount, and lowering one costs about as much as
// running it. The amounts come from validated shapes (a few per shape),
// and past the bound programs are lowered each time.
var hrotPrograms = struct {
	sync.Mutex
	m map[string]*lower.Program
}{m: map[string]*lower.Program{}}

const hrotProgramEntries = 256

func hrotProgram(ring lower.Ring, t uint64, level, k int) (*lower.Program, error) {
	key := fmt.Sprint(ring.LogN, ring.Q, ring.P, t, level, k)
	hrotPrograms.Lock()
	low, ok := hrotPrograms.m[key]
	hrotPrograms.Unlock()
	if ok {
		return low, nil
	}
	low, err := lower.Op(ir.OpHRot, &lower.Context{Scheme: fhe.BGV, Ring: ring, T: t, Level: level, Rotation: k})
	if err != nil {
		return nil, err
	}
	hrotPrograms.Lock()
	if len(hrotPrograms.m) < hrotProgramEntries {
		hrotPrograms.m[key] = low
	}
	hrotPrograms.Unlock()
	return low, nil
}
