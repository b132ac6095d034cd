package engine

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"

	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/ir"
	"github.com/rosemary-fhe/rosemary/lower"
)

// Value is one instance of a node's result: a ciphertext or a plaintext
// held by the host, a value held by the device (Dev), or both.
type Value struct {
	Ct *rlwe.Ciphertext
	Pt *rlwe.Plaintext
	// Dev, when set, names a copy of the value on a ResidentDevice: a
	// stored object instance (database, weights) or a resident result.
	// A value with only Dev never crossed to the host.
	Dev *DeviceValue
}

// DeviceValue describes a value held by the device.
type DeviceValue struct {
	Ref    string        // the device's name for it
	Degree int           // polynomials − 1 (0 for a plaintext)
	Level  int           // limbs − 1
	Meta   rlwe.MetaData // scale, NTT and encoding flags
	Bytes  int64         // size on the device
	Stored bool          // a stored object: read in place, never freed by an execution
}

// Keys are the evaluation keys an execution may need.
type Keys struct {
	Relin  *rlwe.RelinearizationKey
	Galois map[uint64]*rlwe.GaloisKey
}

// Operand is one mProgram operand: limbs shipped with the call, or Ref, a
// value already on the device (a stored object instance, a stored key, a
// resident result or upload).
type Operand struct {
	Limbs [][]uint64
	Ref   string
}

// DeviceRunner executes one lowered operation on the device: inputs are
// the operand objects (in Lowered.Inputs order) and the key, the result is
// the output object's limbs. The local implementation runs the interpreter
// in process; the device package provides a remote one.
type DeviceRunner interface {
	RunLowered(l *lower.Program, inputs []Operand, key Operand) ([][]uint64, Stats, error)
}

// ResidentDevice is a DeviceRunner that keeps values: a host value is
// uploaded once, results stay on the device until the host needs them, so
// only values crossing a host↔device cut move. When an Executor's Device
// implements it, the executor runs in resident mode.
type ResidentDevice interface {
	DeviceRunner
	// Upload places a value's limbs (poly-major, polys polynomials) on the
	// device and returns its reference.
	Upload(limbs [][]uint64, polys int) (string, error)
	// RunResident runs l and keeps the result on the device.
	RunResident(l *lower.Program, inputs []Operand, key Operand) (string, Stats, error)
	// Fetch returns the limbs of a resident value.
	Fetch(ref string) ([][]uint64, error)
	// Free drops resident values (not stored objects).
	Free(refs ...string) error
}

// LocalDevice runs lowered operations on an in-process interpreter. It
// holds no objects: every operand is passed by value.
type LocalDevice struct{}

// RunLowered implements DeviceRunner.
func (LocalDevice) RunLowered(l *lower.Program, inputs []Operand, key Operand) ([][]uint64, Stats, error) {
	if len(inputs) != len(l.Inputs) {
		return nil, Stats{}, fmt.Errorf("engine: %d operands for %d inputs", len(inputs), len(l.Inputs))
	}
	mem := NewMemObjects()
	for i, obj := range l.Inputs {
		if inputs[i].Ref != "" {
			return nil, Stats{}, fmt.Errorf("engine: local device holds no object %q", inputs[i].Ref)
		}
		mem.Set(obj.Space, obj.ID, inputs[i].Limbs)
	}
	if len(l.Keys) > 0 {
		if key.Ref != "" {
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

// ExecStats counts what an execution did.
type ExecStats struct {
	HostOps, DeviceOps int64
	DeviceMicroOps     int64
	// Bytes of ciphertexts and plaintexts crossing host↔device (8-byte
	// words as held here), once per value instance and direction.
	BytesToDevice, BytesFromDevice int64
	// KeyBytesToDevice counts evaluation keys shipped with operations
	// (resident mode without KeyRef); keys referenced on the device cost 0.
	KeyBytesToDevice int64
	// DeviceStoredBytes is the stored data the device read next to the
	// data (it never crossed the link).
	DeviceStoredBytes int64
}

// Executor runs IR programs with real ciphertexts: nodes placed on the
// host with Lattigo's evaluator, nodes placed on the device as lowered
// mPrograms through a DeviceRunner.
//
// With a ResidentDevice, values stay where they are computed: a host value
// is uploaded once, the first time a device node reads it; a device result
// is fetched once, the first time a host node or an Output needs it; stored
// values given as Dev references are read by the device in place, and
// resident intermediates are freed after their last reader.
type Executor struct {
	Preset fhe.Preset
	Params rlwe.Parameters
	Keys   Keys
	// OnDevice reports whether node i runs on the device (nil: all host).
	OnDevice func(i int) bool
	Device   DeviceRunner
	// KeyRef, if set, names the device-stored key of an operation (the
	// relinearization key, or the Galois key of element galEl); "" ships
	// the key's limbs instead.
	KeyRef func(op ir.Op, galEl uint64) string
	// Constants resolves named constants (CMult nodes with a Name, such as
	// the bootstrapping constants of compiler.ExpandBoot); nil refuses them.
	Constants ConstantProvider
	// Diagonals, if set, lets bootstrapping DFT products run as Lattigo's
	// hoisted programs (DiagonalProvider).
	Diagonals DiagonalProvider
	Stats     ExecStats
	// Values holds every node's instances after Run (in resident mode,
	// values already freed on the device are absent; so are the values
	// inside a linear transform run as one program, DiagonalProvider).
	Values [][]Value

	ckks   ckks.Parameters
	bgv    bgv.Parameters
	ckEval *ckks.Evaluator
	bgEval *bgv.Evaluator
	lowers map[string]*lower.Program
	res    ResidentDevice // non-nil in resident mode (set per Run)
	temps  []string       // resident refs created by the current Run
	// users of usersOf's nodes (named constants look up their reader).
	users   [][]int
	usersOf *ir.Program
	// transforms caches the lowered linear transforms by level, slots and
	// diagonals.
	transforms map[string]*lower.LinearTransformProgram
}

// NewExecutor prepares an executor; params is ckks.Parameters or
// bgv.Parameters (the scheme must match the preset's).
func NewExecutor(preset fhe.Preset, params any, keys Keys) (*Executor, error) {
	x := &Executor{Preset: preset, Keys: keys, Device: LocalDevice{}, lowers: map[string]*lower.Program{}}
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
	x.res, _ = x.Device.(ResidentDevice)
	x.temps = x.temps[:0]
	out, err := x.run(p, inputs, stored)
	if x.res != nil && len(x.temps) > 0 {
		// Drop whatever is still resident (error paths, unread values).
		if ferr := x.res.Free(x.temps...); ferr != nil && err == nil {
			err = fmt.Errorf("engine: free resident values: %w", ferr)
		}
	}
	x.temps = x.temps[:0]
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (x *Executor) run(p *ir.Program, inputs, stored map[string][]Value) (map[string][]Value, error) {
	vals := make([][]Value, len(p.Nodes))
	onDev := func(i int) bool { return x.OnDevice != nil && x.OnDevice(i) }
	// crossed[v][d] marks value v already moved to device d (true = device).
	crossed := map[[2]int]bool{}
	lastUse := make([]int, len(p.Nodes))
	for i, n := range p.Nodes {
		for _, a := range n.Args {
			lastUse[a] = i
		}
	}
	out := map[string][]Value{}
	ltHeads, ltSkip := x.linearTransformGroups(p, onDev)
	for i, n := range p.Nodes {
		var err error
		if ltSkip[i] {
			continue // computed inside its linear transform
		}
		if g := ltHeads[i]; g != nil {
			if !onDev(g.input) {
				x.countCross(p, g.input, vals, true, crossed)
			}
			for _, s := range g.stored {
				x.Stats.DeviceStoredBytes += x.nodeBytes(p, s, vals)
			}
			if vals[i], err = x.runLinearTransform(p, i, g, vals); err != nil {
				return nil, fmt.Errorf("engine: node %d (%s): %w", i, n.Name, err)
			}
			continue
		}
		switch n.Op {
		case ir.OpInput, ir.OpStored:
			v, err := sourceValues(n, inputs, stored)
			if err != nil {
				return nil, err
			}
			// A copy: resident mode records uploads in the values.
			vals[i] = append([]Value(nil), v...)
			continue
		case ir.OpOutput:
			if x.res != nil {
				if err := x.materialize(vals[n.Args[0]]); err != nil {
					return nil, fmt.Errorf("engine: output %q: %w", n.Name, err)
				}
				x.release(p, n.Args[0], vals, lastUse, i)
			} else if onDev(n.Args[0]) {
				x.countCross(p, n.Args[0], vals, false, crossed)
			}
			vals[i] = vals[n.Args[0]]
			out[n.Name] = vals[i]
			continue
		}
		for _, a := range n.Args {
			an := p.Nodes[a]
			if x.res == nil && onDev(i) != onDev(a) && !(onDev(i) && an.Op == ir.OpStored) {
				x.countCross(p, a, vals, onDev(i), crossed)
			}
			if onDev(i) && an.Op == ir.OpStored {
				x.Stats.DeviceStoredBytes += x.nodeBytes(p, a, vals)
			}
		}
		if onDev(i) {
			vals[i], err = x.runDevice(p, n, vals)
			x.Stats.DeviceOps += n.Count
		} else {
			if x.res != nil {
				for _, a := range n.Args {
					if err = x.materialize(vals[a]); err != nil {
						break
					}
				}
			}
			if err == nil {
				vals[i], err = x.runHost(p, n, vals)
			}
			x.Stats.HostOps += n.Count
		}
		if err != nil {
			return nil, fmt.Errorf("engine: node %d (%s): %w", i, n.Op, err)
		}
		if x.res != nil {
			for _, a := range n.Args {
				x.release(p, a, vals, lastUse, i)
			}
		}
	}
	x.Values = vals
	return out, nil
}

// sourceValues returns the instances given for an Input or Stored node.
func sourceValues(n ir.Node, inputs, stored map[string][]Value) ([]Value, error) {
	src := inputs
	if n.Op == ir.OpStored {
		src = stored
	}
	v, ok := src[n.Name]
	if !ok || int64(len(v)) != n.Count {
		return nil, fmt.Errorf("engine: node %d: %s %q needs %d instances, got %d", n.ID, n.Op, n.Name, n.Count, len(v))
	}
	return v, nil
}

// materialize fetches the device-only values of vs to the host.
func (x *Executor) materialize(vs []Value) error {
	for k := range vs {
		v := &vs[k]
		if v.Ct != nil || v.Pt != nil || v.Dev == nil {
			continue
		}
		if v.Dev.Stored {
			return fmt.Errorf("stored object %q is held only by the device", v.Dev.Ref)
		}
		limbs, err := x.res.Fetch(v.Dev.Ref)
		if err != nil {
			return fmt.Errorf("fetch %q: %w", v.Dev.Ref, err)
		}
		ct := rlwe.NewCiphertext(x.Params, v.Dev.Degree, v.Dev.Level)
		if !CopyLimbs(limbs, ct.Value, v.Dev.Level+1) {
			return fmt.Errorf("device value %q has %d limbs, want %d×%d", v.Dev.Ref, len(limbs), v.Dev.Degree+1, v.Dev.Level+1)
		}
		*ct.MetaData = v.Dev.Meta
		v.Ct = ct
		x.Stats.BytesFromDevice += v.Dev.Bytes
	}
	return nil
}

// release frees the resident copies of node a's value once node i, its
// last reader, has run.
func (x *Executor) release(p *ir.Program, a int, vals [][]Value, lastUse []int, i int) {
	if lastUse[a] != i || p.Nodes[a].Op == ir.OpStored {
		return
	}
	// A Sum of one instance per group passes its argument's values on:
	// references node i still holds stay.
	live := map[string]bool{}
	for _, v := range vals[i] {
		if v.Dev != nil {
			live[v.Dev.Ref] = true
		}
	}
	var refs []string
	for k := range vals[a] {
		if d := vals[a][k].Dev; d != nil && !d.Stored && !live[d.Ref] {
			refs = append(refs, d.Ref)
			vals[a][k].Dev = nil
		}
	}
	x.free(refs...)
}

// free drops resident values now; failures leave them in temps for the
// final sweep.
func (x *Executor) free(refs ...string) {
	if len(refs) == 0 {
		return
	}
	if err := x.res.Free(refs...); err != nil {
		return
	}
	drop := map[string]bool{}
	for _, r := range refs {
		drop[r] = true
	}
	kept := x.temps[:0]
	for _, r := range x.temps {
		if !drop[r] {
			kept = append(kept, r)
		}
	}
	x.temps = kept
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
		x.Stats.BytesToDevice += x.nodeBytes(p, v, vals)
	} else {
		x.Stats.BytesFromDevice += x.nodeBytes(p, v, vals)
	}
}

// nodeBytes is the size of node v's value as it is held: a compact stored
// plaintext is one limb per instance, whatever form the host holds it in.
func (x *Executor) nodeBytes(p *ir.Program, v int, vals [][]Value) int64 {
	if n := p.Nodes[v]; n.Compact {
		if b, err := p.Bytes(n, 8*WordBytes); err == nil {
			return b * int64(len(vals[v]))
		}
	}
	return valueBytes(vals[v])
}

func valueBytes(vs []Value) int64 {
	var b int64
	for _, v := range vs {
		b += v.bytes()
	}
	return b
}

func (v *Value) bytes() int64 {
	switch {
	case v.Ct != nil:
		var b int64
		for _, p := range v.Ct.Value {
			b += int64(len(p.Coeffs)) * int64(len(p.Coeffs[0])) * WordBytes
		}
		return b
	case v.Pt != nil:
		return int64(len(v.Pt.Value.Coeffs)) * int64(len(v.Pt.Value.Coeffs[0])) * WordBytes
	case v.Dev != nil:
		return v.Dev.Bytes
	}
	return 0
}

// level, degree and meta describe a value wherever it is held.
func (v *Value) level() int {
	switch {
	case v.Ct != nil:
		return v.Ct.Level()
	case v.Pt != nil:
		return v.Pt.Level()
	case v.Dev != nil:
		return v.Dev.Level
	}
	return -1
}

func (v *Value) degree() int {
	switch {
	case v.Ct != nil:
		return v.Ct.Degree()
	case v.Pt != nil:
		return 0
	case v.Dev != nil:
		return v.Dev.Degree
	}
	return -1
}

func (v *Value) meta() *rlwe.MetaData {
	switch {
	case v.Ct != nil:
		return v.Ct.MetaData
	case v.Pt != nil:
		return v.Pt.MetaData
	case v.Dev != nil:
		return &v.Dev.Meta
	}
	return nil
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
		if isNamedConstant(n) {
			c, err := x.resolveConstant(p, n, &a, vals, k)
			if err != nil {
				return nil, err
			}
			ct, err := x.hostConstant(a.Ct, c)
			if err != nil {
				return nil, err
			}
			out[k] = Value{Ct: ct}
			continue
		}
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
	case ir.OpModRaise:
		if !isCKKS {
			return nil, fmt.Errorf("ModRaise is a step of CKKS bootstrapping")
		}
		return ModRaise(x.Params, a.Ct, n.Level)
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
				next, err := x.deviceOp(add, &acc, &args[j*k+t])
				if err != nil {
					return nil, err
				}
				if t > 1 && x.res != nil && acc.Dev != nil {
					x.free(acc.Dev.Ref) // a partial sum of this loop
				}
				acc = next
			}
			out[j] = acc
		}
		return out, nil
	}
	if n.Op == ir.OpLevelDown {
		if x.res != nil {
			if err := x.materialize(vals[n.Args[0]]); err != nil {
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
			if out[k], err = x.deviceConstant(a, c); err != nil {
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
			if out[k], err = x.deviceMixedAdd(n, a, b); err != nil {
				return nil, err
			}
			continue
		}
		v, err := x.deviceOp(n, a, b)
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
func (x *Executor) operand(v *Value, obj lower.Object) (Operand, error) {
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
	ref, err := x.res.Upload(PolyLimbs(polys, limbs), len(polys))
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
func (x *Executor) compactOperand(v *Value, level int) (Operand, error) {
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
	ref, err := x.res.Upload(limbs, 1)
	if err != nil {
		return Operand{}, fmt.Errorf("upload: %w", err)
	}
	x.temps = append(x.temps, ref)
	x.Stats.BytesToDevice += int64(len(m)) * WordBytes
	return Operand{Ref: ref}, nil
}

func (x *Executor) deviceOp(n ir.Node, a, b *Value) (Value, error) {
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
			if inputs[i], err = x.compactOperand(v, level); err != nil {
				return Value{}, fmt.Errorf("operand %d: %w", i, err)
			}
			continue
		}
		if v.level() < level || v.degree()+1 != obj.Polys {
			return Value{}, fmt.Errorf("operand %d has level %d and degree %d, the program wants %d and %d", i, v.level(), v.degree(), level, obj.Polys-1)
		}
		if inputs[i], err = x.operand(v, obj); err != nil {
			return Value{}, fmt.Errorf("operand %d: %w", i, err)
		}
	}
	var key Operand
	if len(l.Keys) > 0 {
		if x.KeyRef != nil {
			key.Ref = x.KeyRef(n.Op, l.GaloisElement)
		}
		if key.Ref == "" {
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
	return x.runLowered(l, inputs, key, md)
}

// runLowered runs a lowered operation on the device (kept there in
// resident mode) and labels its result with md.
func (x *Executor) runLowered(l *lower.Program, inputs []Operand, key Operand, md rlwe.MetaData) (Value, error) {
	level := l.Output.Limbs - 1
	if x.res != nil {
		ref, st, err := x.res.RunResident(l, inputs, key)
		if err != nil {
			return Value{}, err
		}
		x.temps = append(x.temps, ref)
		x.Stats.DeviceMicroOps += st.MicroOps
		bytes := int64(l.Output.Polys) * int64(l.Output.Limbs) * int64(x.Params.N()) * WordBytes
		return Value{Dev: &DeviceValue{Ref: ref, Degree: l.Output.Polys - 1, Level: level, Meta: md, Bytes: bytes}}, nil
	}
	limbs, st, err := x.Device.RunLowered(l, inputs, key)
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
