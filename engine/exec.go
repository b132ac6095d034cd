package engine

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/ir"
)

// Value is one instance of a node's result: a ciphertext or a plaintext.
type Value struct {
	Ct *rlwe.Ciphertext
	Pt *rlwe.Plaintext
}

// Keys are the evaluation keys an execution may need.
type Keys struct {
	Relin  *rlwe.RelinearizationKey
	Galois map[uint64]*rlwe.GaloisKey
}

// DeviceRunner executes one lowered operation on the device: the inputs
// are the operand objects' limbs (in Lowered.Inputs order) and the key's,
// the result is the output object's limbs. The local implementation runs
// the interpreter in process; the device package provides a remote one.
type DeviceRunner interface {
	RunLowered(l *compiler.Lowered, inputs [][][]uint64, key [][]uint64) ([][]uint64, Stats, error)
}

// LocalDevice runs lowered operations on an in-process interpreter.
type LocalDevice struct{}

// RunLowered implements DeviceRunner.
func (LocalDevice) RunLowered(l *compiler.Lowered, inputs [][][]uint64, key [][]uint64) ([][]uint64, Stats, error) {
	mem := NewMemObjects()
	for i, obj := range l.Inputs {
		mem.Set(obj.Space, obj.ID, inputs[i])
	}
	if len(l.Keys) > 0 {
		mem.Set(l.Keys[0].Space, l.Keys[0].ID, key)
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

// ExecStats counts what an execution did.
type ExecStats struct {
	HostOps, DeviceOps int64
	DeviceMicroOps     int64
	// Bytes of ciphertexts and plaintexts crossing host↔device (8-byte
	// words as held here), once per value instance and direction.
	BytesToDevice, BytesFromDevice int64
	// DeviceStoredBytes is the stored data the device read next to the
	// data (it never crossed the link).
	DeviceStoredBytes int64
}

// Executor runs IR programs with real ciphertexts: nodes placed on the
// host with Lattigo's evaluator, nodes placed on the device as lowered
// mPrograms through a DeviceRunner.
type Executor struct {
	Preset fhe.Preset
	Params rlwe.Parameters
	Keys   Keys
	// OnDevice reports whether node i runs on the device (nil: all host).
	OnDevice func(i int) bool
	Device   DeviceRunner
	Stats    ExecStats

	ckks   ckks.Parameters
	bgv    bgv.Parameters
	ckEval *ckks.Evaluator
	bgEval *bgv.Evaluator
	lowers map[string]*compiler.Lowered
}

// NewExecutor prepares an executor; params is ckks.Parameters or
// bgv.Parameters (the scheme must match the preset's).
func NewExecutor(preset fhe.Preset, params any, keys Keys) (*Executor, error) {
	x := &Executor{Preset: preset, Keys: keys, Device: LocalDevice{}, lowers: map[string]*compiler.Lowered{}}
	var gks []*rlwe.GaloisKey
	for _, g := range keys.Galois {
		gks = append(gks, g)
	}
	evk := rlwe.NewMemEvaluationKeySet(keys.Relin, gks...)
	switch p := params.(type) {
	case ckks.Parameters:
		if preset.Scheme != fhe.CKKS {
			return nil, fmt.Errorf("engine: CKKS parameters for a %s preset", preset.Scheme)
		}
		x.ckks, x.Params = p, p.Parameters
		x.ckEval = ckks.NewEvaluator(p, evk)
	case bgv.Parameters:
		if preset.Scheme != fhe.BGV {
			return nil, fmt.Errorf("engine: BGV parameters for a %s preset", preset.Scheme)
		}
		x.bgv, x.Params = p, p.Parameters
		x.bgEval = bgv.NewEvaluator(p, evk)
	default:
		return nil, fmt.Errorf("engine: unsupported parameters %T", params)
	}
	return x, nil
}

// Run executes p. inputs and stored give the instances of each Input and
// Stored node by name; the result maps each Output name to its instances.
func (x *Executor) Run(p *ir.Program, inputs, stored map[string][]Value) (map[string][]Value, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	vals := make([][]Value, len(p.Nodes))
	onDev := func(i int) bool { return x.OnDevice != nil && x.OnDevice(i) }
	// crossed[v][d] marks value v already moved to device d (true = device).
	crossed := map[[2]int]bool{}
	out := map[string][]Value{}
	for i, n := range p.Nodes {
		var err error
		switch n.Op {
		case ir.OpInput, ir.OpStored:
			src := inputs
			if n.Op == ir.OpStored {
				src = stored
			}
			v, ok := src[n.Name]
			if !ok || int64(len(v)) != n.Count {
				return nil, fmt.Errorf("engine: node %d: %s %q needs %d instances, got %d", i, n.Op, n.Name, n.Count, len(v))
			}
			vals[i] = v
			continue
		case ir.OpOutput:
			vals[i] = vals[n.Args[0]]
			out[n.Name] = vals[i]
			if onDev(n.Args[0]) {
				x.countCross(p, n.Args[0], vals, false, crossed)
			}
			continue
		}
		for _, a := range n.Args {
			an := p.Nodes[a]
			if onDev(i) != onDev(a) && !(onDev(i) && an.Op == ir.OpStored) {
				x.countCross(p, a, vals, onDev(i), crossed)
			}
			if onDev(i) && an.Op == ir.OpStored {
				x.Stats.DeviceStoredBytes += valueBytes(vals[a])
			}
		}
		if onDev(i) {
			vals[i], err = x.runDevice(p, n, vals)
			x.Stats.DeviceOps += n.Count
		} else {
			vals[i], err = x.runHost(p, n, vals)
			x.Stats.HostOps += n.Count
		}
		if err != nil {
			return nil, fmt.Errorf("engine: node %d (%s): %w", i, n.Op, err)
		}
	}
	return out, nil
}

func (x *Executor) countCross(p *ir.Program, v int, vals [][]Value, toDevice bool, crossed map[[2]int]bool) {
	key := [2]int{v, 0}
	if toDevice {
		key[1] = 1
	}
	if crossed[key] {
		return
	}
	crossed[key] = true
	if toDevice {
		x.Stats.BytesToDevice += valueBytes(vals[v])
	} else {
		x.Stats.BytesFromDevice += valueBytes(vals[v])
	}
}

func valueBytes(vs []Value) int64 {
	var b int64
	for _, v := range vs {
		if v.Ct != nil {
			for _, p := range v.Ct.Value {
				b += int64(len(p.Coeffs)) * int64(len(p.Coeffs[0])) * WordBytes
			}
		} else if v.Pt != nil {
			b += int64(len(v.Pt.Value.Coeffs)) * int64(len(v.Pt.Value.Coeffs[0])) * WordBytes
		}
	}
	return b
}

// instance returns instance k of a node's argument (cyclic reuse).
func instance(vs []Value, k int64) Value { return vs[k%int64(len(vs))] }

func (x *Executor) runHost(p *ir.Program, n ir.Node, vals [][]Value) ([]Value, error) {
	out := make([]Value, n.Count)
	if n.Op == ir.OpSum {
		args := vals[n.Args[0]]
		k := int64(len(args)) / n.Count
		for j := int64(0); j < n.Count; j++ {
			acc := args[j*k].Ct.CopyNew()
			for t := int64(1); t < k; t++ {
				if err := x.add(acc, args[j*k+t].Ct, acc); err != nil {
					return nil, err
				}
			}
			out[j] = Value{Ct: acc}
		}
		return out, nil
	}
	for k := int64(0); k < n.Count; k++ {
		a := instance(vals[n.Args[0]], k)
		var b Value
		if len(n.Args) > 1 {
			b = instance(vals[n.Args[1]], k)
		}
		ct, err := x.hostOp(n, a, b)
		if err != nil {
			return nil, err
		}
		out[k] = Value{Ct: ct}
	}
	return out, nil
}

func (x *Executor) add(a, b, out *rlwe.Ciphertext) error {
	if x.ckEval != nil {
		return x.ckEval.Add(a, b, out)
	}
	return x.bgEval.Add(a, b, out)
}

func (x *Executor) hostOp(n ir.Node, a, b Value) (*rlwe.Ciphertext, error) {
	ck, bg := x.ckEval, x.bgEval
	isCKKS := ck != nil
	switch n.Op {
	case ir.OpHAdd:
		if isCKKS {
			return ck.AddNew(a.Ct, b.Ct)
		}
		return bg.AddNew(a.Ct, b.Ct)
	case ir.OpHSub:
		if isCKKS {
			return ck.SubNew(a.Ct, b.Ct)
		}
		return bg.SubNew(a.Ct, b.Ct)
	case ir.OpPMult:
		var op rlwe.Operand = b.Pt
		if b.Pt == nil {
			op = b.Ct
		}
		if isCKKS {
			return ck.MulNew(a.Ct, op)
		}
		return bg.MulNew(a.Ct, op)
	case ir.OpCMult:
		if isCKKS {
			return ck.MulNew(a.Ct, n.Constant)
		}
		return bg.MulNew(a.Ct, int64(n.Constant))
	case ir.OpHMult:
		if isCKKS {
			return ck.MulNew(a.Ct, b.Ct)
		}
		return bg.MulNew(a.Ct, b.Ct)
	case ir.OpRelinearize:
		if isCKKS {
			return ck.RelinearizeNew(a.Ct)
		}
		return bg.RelinearizeNew(a.Ct)
	case ir.OpHRot:
		if isCKKS {
			return ck.RotateNew(a.Ct, n.Rotation)
		}
		return bg.RotateColumnsNew(a.Ct, n.Rotation)
	case ir.OpConjugate:
		if isCKKS {
			return ck.ConjugateNew(a.Ct)
		}
		return bg.RotateRowsNew(a.Ct)
	case ir.OpRescale:
		out := rlwe.NewCiphertext(x.Params, 1, a.Ct.Level()-1)
		if isCKKS {
			return out, ck.Rescale(a.Ct, out)
		}
		return out, bg.Rescale(a.Ct, out)
	case ir.OpLevelDown:
		c := a.Ct.CopyNew()
		c.Resize(c.Degree(), n.Level)
		return c, nil
	}
	return nil, fmt.Errorf("no host execution for %s", n.Op)
}

// runDevice executes every instance of n as its lowered mProgram.
func (x *Executor) runDevice(p *ir.Program, n ir.Node, vals [][]Value) ([]Value, error) {
	if n.Op == ir.OpSum {
		// A Sum folds instances with HAdds on the device.
		args := vals[n.Args[0]]
		k := int64(len(args)) / n.Count
		out := make([]Value, n.Count)
		add := ir.Node{Op: ir.OpHAdd, Params: n.Params, Count: 1}
		for j := int64(0); j < n.Count; j++ {
			acc := args[j*k]
			for t := int64(1); t < k; t++ {
				ct, err := x.deviceOp(add, acc, args[j*k+t])
				if err != nil {
					return nil, err
				}
				acc = Value{Ct: ct}
			}
			out[j] = acc
		}
		return out, nil
	}
	if n.Op == ir.OpLevelDown {
		return x.runHost(p, n, vals) // dropping limbs moves no data
	}
	out := make([]Value, n.Count)
	for k := int64(0); k < n.Count; k++ {
		a := instance(vals[n.Args[0]], k)
		var b Value
		if len(n.Args) > 1 {
			b = instance(vals[n.Args[1]], k)
		}
		ct, err := x.deviceOp(n, a, b)
		if err != nil {
			return nil, err
		}
		out[k] = Value{Ct: ct}
	}
	return out, nil
}

func (x *Executor) lowered(n ir.Node, level int) (*compiler.Lowered, rlwe.Scale, error) {
	ctx := &compiler.LowerContext{Scheme: x.Preset.Scheme, Ring: compiler.RingOf(x.Params), T: x.Preset.T,
		Level: level, Rotation: n.Rotation}
	constScale := rlwe.NewScale(1)
	if n.Op == ir.OpCMult {
		if x.ckEval != nil {
			ctx.Constant, constScale = compiler.CKKSConstant(x.ckks, level, n.Constant)
		} else {
			ctx.Constant = compiler.BGVConstant(x.bgv, level, int64(n.Constant))
		}
	}
	key := fmt.Sprintf("%s|%d|%d|%v", n.Op, level, n.Rotation, n.Constant)
	if l, ok := x.lowers[key]; ok {
		return l, constScale, nil
	}
	l, err := compiler.LowerOp(n.Op, ctx)
	if err != nil {
		return nil, constScale, err
	}
	x.lowers[key] = l
	return l, constScale, nil
}

func (x *Executor) deviceOp(n ir.Node, a, b Value) (*rlwe.Ciphertext, error) {
	level := a.Ct.Level()
	l, constScale, err := x.lowered(n, level)
	if err != nil {
		return nil, err
	}
	inputs := make([][][]uint64, len(l.Inputs))
	for i, obj := range l.Inputs {
		v := a
		if i == 1 {
			v = b
		}
		switch {
		case v.Ct != nil:
			if v.Ct.Level() < level || len(v.Ct.Value) != obj.Polys {
				return nil, fmt.Errorf("operand %d has level %d and degree %d, the program wants %d and %d", i, v.Ct.Level(), v.Ct.Degree(), level, obj.Polys-1)
			}
			inputs[i] = PolyLimbs(v.Ct.Value, obj.Limbs)
		case v.Pt != nil:
			inputs[i] = PolyLimbs([]ring.Poly{v.Pt.Value}, obj.Limbs)
		default:
			return nil, fmt.Errorf("operand %d missing", i)
		}
	}
	var key [][]uint64
	if len(l.Keys) > 0 {
		g, err := x.keyFor(n, l)
		if err != nil {
			return nil, err
		}
		key = KeyLimbs(g)
	}
	limbs, st, err := x.Device.RunLowered(l, inputs, key)
	if err != nil {
		return nil, err
	}
	x.Stats.DeviceMicroOps += st.MicroOps
	outLevel := l.Output.Limbs - 1
	ct := rlwe.NewCiphertext(x.Params, l.Output.Polys-1, outLevel)
	*ct.MetaData = *a.Ct.MetaData
	if !CopyLimbs(limbs, ct.Value, l.Output.Limbs) {
		return nil, fmt.Errorf("device returned %d limbs, want %d×%d", len(limbs), l.Output.Polys, l.Output.Limbs)
	}
	switch n.Op {
	case ir.OpPMult:
		if b.Pt != nil {
			ct.Scale = a.Ct.Scale.Mul(b.Pt.Scale)
		} else {
			ct.Scale = a.Ct.Scale.Mul(b.Ct.Scale)
		}
	case ir.OpHMult:
		ct.Scale = a.Ct.Scale.Mul(b.Ct.Scale)
	case ir.OpCMult:
		ct.Scale = a.Ct.Scale.Mul(constScale)
	case ir.OpHAdd, ir.OpHSub:
		ct.Scale = a.Ct.Scale.Max(b.Ct.Scale)
	case ir.OpRescale:
		q := x.Params.Q()[level]
		if x.ckEval != nil {
			ct.Scale = a.Ct.Scale.Div(x.ckks.NewScale(q))
		} else {
			ct.Scale = a.Ct.Scale.Div(x.bgv.NewScale(q))
		}
	}
	return ct, nil
}

func (x *Executor) keyFor(n ir.Node, l *compiler.Lowered) (*rlwe.GadgetCiphertext, error) {
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
