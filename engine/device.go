package engine

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// This file holds the device path: the runner interfaces, the in-process
// interpreter, and a node lowered to mPrograms and run on the device.

// DeviceValue describes a value held by the device.
type DeviceValue struct {
	Ref    Ref           // the device's name for it
	Degree int           // polynomials − 1 (0 for a plaintext)
	Level  int           // limbs − 1
	Meta   rlwe.MetaData // scale, NTT and encoding flags
	Bytes  int64         // size on the device
	Stored bool          // a stored object: read in place, never freed by an execution
}

// Operand is one mProgram operand: limbs shipped with the call, or Ref, a
// value already on the device (a stored object instance, a stored key, a
// resident result or upload).
type Operand struct {
	Limbs [][]uint64
	Ref   Ref
}

// DeviceRunner executes one lowered operation on the device: inputs are
// the operand objects (in Lowered.Inputs order) and the key, the result is
// the output object's limbs. The local implementation runs the interpreter
// in process; the device package provides a remote one.
type DeviceRunner interface {
	RunLowered(ctx context.Context, l *lower.Program, inputs []Operand, key Operand) ([][]uint64, Stats, error)
}

// ResidentDevice is a DeviceRunner that keeps values: a host value is
// uploaded once, results stay on the device until the host needs them, so
// only values crossing a host↔device cut move. When an Executor's Device
// implements it, the executor runs in resident mode.
type ResidentDevice interface {
	DeviceRunner
	// Upload places a value's limbs (poly-major, polys polynomials) on the
	// device and returns its reference.
	Upload(ctx context.Context, limbs [][]uint64, polys int) (Ref, error)
	// RunResident runs l and keeps the result on the device.
	RunResident(ctx context.Context, l *lower.Program, inputs []Operand, key Operand) (Ref, Stats, error)
	// Fetch returns the limbs of a resident value.
	Fetch(ctx context.Context, ref Ref) ([][]uint64, error)
	// Free drops resident values (not stored objects).
	Free(ctx context.Context, refs ...Ref) error
}

// LocalDevice runs lowered operations on an in-process interpreter. It
// holds no objects: every operand is passed by value.
type LocalDevice struct{}

// RunLowered implements DeviceRunner.
func (LocalDevice) RunLowered(_ context.Context, l *lower.Program, inputs []Operand, key Operand) ([][]uint64, Stats, error) {
	if len(inputs) != len(l.Inputs) {
		return nil, Stats{}, fmt.Errorf("engine: %d operands for %d inputs", len(inputs), len(l.Inputs))
	}
	mem := NewMemObjects()
	for i, obj := range l.Inputs {
		if !inputs[i].Ref.IsZero() {
			return nil, Stats{}, fmt.Errorf("engine: local device holds no object %q", inputs[i].Ref)
		}
		mem.Set(obj.Space, obj.ID, inputs[i].Limbs)
	}
	if len(l.Keys) > 0 {
		if !key.Ref.IsZero() {
			return nil, Stats{}, fmt.Errorf("engine: local device holds no key %q", key.Ref)
		}
		mem.Set(l.Keys[0].Space, l.Keys[0].ID, key.Limbs)
	}
	m, err := NewMachine(l.Program.Config, mem)
	if err != nil {
		return nil, Stats{}, err
	}
	st, err := m.Run(l.Program)
	if err != nil {
		return nil, st, err
	}
	return mem.Get(l.Output.Space, l.Output.ID), st, nil
}

// runDevice executes every instance of n as its lowered mProgram.
func (x *Executor) runDevice(ctx context.Context, p *ir.Program, n ir.Node, vals [][]Value) ([]Value, error) {
	if n.Op == ir.OpSum {
		// A Sum folds instances with HAdds on the device.
		args := vals[n.Args[0]]
		k := int64(len(args)) / n.Count
		out := make([]Value, n.Count)
		add := ir.Node{Op: ir.OpHAdd, Params: n.Params, Count: 1}
		for j := int64(0); j < n.Count; j++ {
			acc := args[j*k]
			for t := int64(1); t < k; t++ {
				next, err := x.deviceOp(ctx, add, &acc, &args[j*k+t])
				if err != nil {
					return nil, err
				}
				if t > 1 && x.res != nil && acc.Dev != nil {
					x.free(ctx, acc.Dev.Ref) // a partial sum of this loop
				}
				acc = next
			}
			out[j] = acc
		}
		return out, nil
	}
	if n.Op == ir.OpLevelDown {
		if x.res != nil {
			if err := x.materialize(ctx, vals[n.Args[0]]); err != nil {
				return nil, err
			}
		}
		return x.runHost(p, n, vals) // dropping limbs moves no data
	}
	out := make([]Value, n.Count)
	n.Op = lower.NodeOp(p, n) // a compact plaintext is lifted on the device
	for k := int64(0); k < n.Count; k++ {
		a := instanceRef(vals[n.Args[0]], k)
		if isNamedConstant(n) {
			c, err := x.resolveConstant(p, n, a, vals, k)
			if err != nil {
				return nil, err
			}
			if out[k], err = x.deviceConstant(ctx, a, c); err != nil {
				return nil, err
			}
			continue
		}
		b := &Value{}
		if len(n.Args) > 1 {
			b = instanceRef(vals[n.Args[1]], k)
		}
		if isMixedAdd(n, a, b) {
			var err error
			if out[k], err = x.deviceMixedAdd(ctx, n, a, b); err != nil {
				return nil, err
			}
			continue
		}
		v, err := x.deviceOp(ctx, n, a, b)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func instanceRef(vs []Value, k int64) *Value { return &vs[k%int64(len(vs))] }

func (x *Executor) lowered(n ir.Node, level int) (*lower.Program, rlwe.Scale, error) {
	ctx := &lower.Context{Scheme: x.Preset.Scheme, Ring: lower.RingOf(x.Params), T: x.Preset.T,
		Level: level, Rotation: n.Rotation}
	if n.Op == ir.OpModRaise {
		ctx.TargetLevel = n.Level
	}
	constScale := rlwe.NewScale(1)
	if n.Op == ir.OpCMult {
		if x.ckEval != nil {
			ctx.Constant, constScale = lower.CKKSConstant(x.ckks, level, n.Constant)
		} else {
			ctx.Constant = lower.BGVConstant(x.bgv, level, int64(n.Constant))
		}
	}
	key := fmt.Sprintf("%s|%d|%d|%v|%d", n.Op, level, n.Rotation, n.Constant, ctx.TargetLevel)
	if l, ok := x.lowers[key]; ok {
		return l, constScale, nil
	}
	l, err := lower.Op(n.Op, ctx)
	if err != nil {
		return nil, constScale, err
	}
	x.lowers[key] = l
	return l, constScale, nil
}

// operand passes v to the device: by value, or (resident mode) by
// reference, uploading it first if the device does not hold it yet.
func (x *Executor) operand(ctx context.Context, v *Value, obj lower.Object) (Operand, error) {
	if x.res == nil {
		switch {
		case v.Ct != nil:
			return Operand{Limbs: PolyLimbs(v.Ct.Value, obj.Limbs)}, nil
		case v.Pt != nil:
			return Operand{Limbs: PolyLimbs([]ring.Poly{v.Pt.Value}, obj.Limbs)}, nil
		}
		return Operand{}, fmt.Errorf("operand held by no device this executor can reach")
	}
	if v.Dev != nil {
		return Operand{Ref: v.Dev.Ref}, nil
	}
	var polys []ring.Poly
	switch {
	case v.Ct != nil:
		polys = v.Ct.Value
	case v.Pt != nil:
		polys = []ring.Poly{v.Pt.Value}
	default:
		return Operand{}, fmt.Errorf("operand missing")
	}
	limbs := v.level() + 1
	ref, err := x.res.Upload(ctx, PolyLimbs(polys, limbs), len(polys))
	if err != nil {
		return Operand{}, fmt.Errorf("upload: %w", err)
	}
	x.temps = append(x.temps, ref)
	d := &DeviceValue{Ref: ref, Degree: len(polys) - 1, Level: limbs - 1, Meta: *v.meta(), Bytes: v.bytes()}
	v.Dev = d
	x.Stats.BytesToDevice += d.Bytes
	return Operand{Ref: ref}, nil
}

// compactOperand passes a compact stored plaintext: the device's stored
// object (one limb) by reference, or the host's plaintext reduced to its
// compact form.
func (x *Executor) compactOperand(ctx context.Context, v *Value, level int) (Operand, error) {
	if v.level() < level || v.degree() != 0 {
		return Operand{}, fmt.Errorf("compact plaintext at level %d, degree %d; the program wants level %d", v.level(), v.degree(), level)
	}
	if v.Dev != nil {
		// The device's object must hold the compact form (one limb); a
		// full RNS plaintext there would be read as coefficients silently.
		if want := int64(x.Params.N()) * WordBytes; v.Dev.Bytes != want {
			return Operand{}, fmt.Errorf("stored object %q holds %d B, not a compact plaintext (%d B)", v.Dev.Ref, v.Dev.Bytes, want)
		}
		return Operand{Ref: v.Dev.Ref}, nil
	}
	if v.Pt == nil {
		return Operand{}, fmt.Errorf("compact plaintext missing")
	}
	m, err := fhe.CompactBGV(x.bgv, v.Pt)
	if err != nil {
		return Operand{}, err
	}
	limbs := [][]uint64{m}
	if x.res == nil {
		return Operand{Limbs: limbs}, nil
	}
	ref, err := x.res.Upload(ctx, limbs, 1)
	if err != nil {
		return Operand{}, fmt.Errorf("upload: %w", err)
	}
	x.temps = append(x.temps, ref)
	x.Stats.BytesToDevice += int64(len(m)) * WordBytes
	return Operand{Ref: ref}, nil
}

func (x *Executor) deviceOp(ctx context.Context, n ir.Node, a, b *Value) (Value, error) {
	level := a.level()
	if level < 0 || a.Pt != nil {
		return Value{}, fmt.Errorf("first operand is not a ciphertext")
	}
	l, constScale, err := x.lowered(n, level)
	if err != nil {
		return Value{}, err
	}
	inputs := make([]Operand, len(l.Inputs))
	for i, obj := range l.Inputs {
		v := a
		if i == 1 {
			v = b
		}
		if v.level() < 0 {
			return Value{}, fmt.Errorf("operand %d missing", i)
		}
		if n.Op == lower.OpPMultCompact && i == 1 {
			if inputs[i], err = x.compactOperand(ctx, v, level); err != nil {
				return Value{}, fmt.Errorf("operand %d: %w", i, err)
			}
			continue
		}
		if v.level() < level || v.degree()+1 != obj.Polys {
			return Value{}, fmt.Errorf("operand %d has level %d and degree %d, the program wants %d and %d", i, v.level(), v.degree(), level, obj.Polys-1)
		}
		if inputs[i], err = x.operand(ctx, v, obj); err != nil {
			return Value{}, fmt.Errorf("operand %d: %w", i, err)
		}
	}
	var key Operand
	if len(l.Keys) > 0 {
		if x.KeyRef != nil {
			key.Ref = x.KeyRef(n.Op, l.GaloisElement)
		}
		if key.Ref.IsZero() {
			g, err := x.keyFor(n, l)
			if err != nil {
				return Value{}, err
			}
			key.Limbs = KeyLimbs(g)
			if x.res != nil {
				x.Stats.KeyBytesToDevice += int64(len(key.Limbs)) * int64(len(key.Limbs[0])) * WordBytes
			}
		}
	}
	var sc scaler = x.bgv
	if x.ckEval != nil {
		sc = x.ckks
	}
	bm := a.meta()
	if b != nil && b.meta() != nil {
		bm = b.meta()
	}
	md := resultMeta(n.Op, a.meta(), bm, constScale, x.Params.Q()[level], sc)
	return x.runLowered(ctx, l, inputs, key, md)
}

// runLowered runs a lowered operation on the device (kept there in
// resident mode) and labels its result with md.
func (x *Executor) runLowered(ctx context.Context, l *lower.Program, inputs []Operand, key Operand, md rlwe.MetaData) (Value, error) {
	level := l.Output.Limbs - 1
	if x.res != nil {
		ref, st, err := x.res.RunResident(ctx, l, inputs, key)
		if err != nil {
			return Value{}, err
		}
		x.temps = append(x.temps, ref)
		x.Stats.DeviceMicroOps += st.MicroOps
		bytes := int64(l.Output.Polys) * int64(l.Output.Limbs) * int64(x.Params.N()) * WordBytes
		return Value{Dev: &DeviceValue{Ref: ref, Degree: l.Output.Polys - 1, Level: level, Meta: md, Bytes: bytes}}, nil
	}
	limbs, st, err := x.Device.RunLowered(ctx, l, inputs, key)
	if err != nil {
		return Value{}, err
	}
	x.Stats.DeviceMicroOps += st.MicroOps
	ct := rlwe.NewCiphertext(x.Params, l.Output.Polys-1, level)
	*ct.MetaData = md
	if !CopyLimbs(limbs, ct.Value, level+1) {
		return Value{}, fmt.Errorf("device returned %d limbs, want %d×%d", len(limbs), l.Output.Polys, level+1)
	}
	return Value{Ct: ct}, nil
}

func (x *Executor) keyFor(n ir.Node, l *lower.Program) (*rlwe.GadgetCiphertext, error) {
	switch n.Op {
	case ir.OpRelinearize:
		if x.Keys.Relin == nil {
			return nil, fmt.Errorf("no relinearization key")
		}
		return &x.Keys.Relin.GadgetCiphertext, nil
	default:
		g, ok := x.Keys.Galois[l.GaloisElement]
		if !ok {
			return nil, fmt.Errorf("no Galois key for element %d", l.GaloisElement)
		}
		return &g.GadgetCiphertext, nil
	}
}
