package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
)

// DiagonalProvider gives the limbs of a stored diagonal plaintext over
// q_0…q_level and the special primes, in Montgomery form, as Lattigo keeps
// the diagonals of a linear transformation (LinearTransformation.Vec).
// With one, an executor runs each bootstrapping DFT product
// (lower.BootLinearTransform) whose nodes all run on the local device
// as one hoisted program (lower.LinearTransform), bit-exact with
// Lattigo's; without, node by node.
type DiagonalProvider interface {
	DiagonalQP(name string, level int) ([][]uint64, error)
}

// ltGroup is one DFT product run as a whole: the nodes it replaces, its
// input and its diagonals.
type ltGroup struct {
	spec    lower.BootLinearTransform
	input   int
	diags   []int        // diagonal indices
	stored  map[int]int  // diagonal → Stored node
	members map[int]bool // nodes the product replaces, the head included
	count   int64        // operations replaced (for the statistics)
}

// linearTransformGroups finds the DFT products of p that can run fused:
// every member on the device, each an HRot, PMult or HAdd reading only
// members, the input and the diagonals, and read only by members (except
// the head). Others run node by node.
func (x *Executor) linearTransformGroups(p *ir.Program, onDev func(int) bool) (heads map[int]*ltGroup, skip map[int]bool) {
	heads, skip = map[int]*ltGroup{}, map[int]bool{}
	if x.Diagonals == nil || x.res != nil {
		return heads, skip
	}
	if _, ok := x.Device.(LocalDevice); !ok {
		return heads, skip // one key per call through DeviceRunner
	}
	users := p.Users()
	for h, n := range p.Nodes {
		spec, err := lower.ParseBootLinearTransform(n.Name)
		if err != nil || !onDev(h) {
			continue
		}
		g := &ltGroup{spec: spec, input: h - spec.Input, stored: map[int]int{}, members: map[int]bool{}}
		if g.input < 0 || p.Nodes[g.input].Level != n.Level {
			continue
		}
		ok := true
		stack := []int{h}
		for len(stack) > 0 && ok {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if g.members[v] {
				continue
			}
			m := p.Nodes[v]
			if v <= g.input || !onDev(v) || (m.Op != ir.OpHRot && m.Op != ir.OpPMult && m.Op != ir.OpHAdd) {
				ok = false
				break
			}
			g.members[v] = true
			g.count += m.Count
			for k, a := range m.Args {
				switch {
				case a == g.input:
				case m.Op == ir.OpPMult && k == 1:
					d, err := diagonalIndex(p.Nodes[a].Name, spec)
					if err != nil || p.Nodes[a].Op != ir.OpStored {
						ok = false
					} else {
						g.stored[d] = a
						g.diags = append(g.diags, d)
					}
				default:
					stack = append(stack, a)
				}
			}
		}
		for v := range g.members {
			for _, u := range users[v] {
				if v != h && !g.members[u] {
					ok = false
				}
			}
		}
		if !ok || len(g.diags) == 0 {
			continue
		}
		// Lattigo's BSGS rotates by its own baby and giant steps: fuse only
		// if the key set has them (a plan may have rewritten the rotations).
		l, err := x.lowerTransform(n.Level, g.spec.Slots, g.diags)
		if err != nil {
			continue
		}
		for _, gal := range l.Galois {
			if _, has := x.Keys.Galois[gal]; !has {
				ok = false
			}
		}
		if !ok {
			continue
		}
		heads[h] = g
		for v := range g.members {
			if v != h {
				skip[v] = true
			}
		}
	}
	return heads, skip
}

// lowerTransform returns the lowered linear transform, cached.
func (x *Executor) lowerTransform(level, slots int, diags []int) (*lower.LinearTransformProgram, error) {
	key := fmt.Sprintf("%d|%d|%v", level, slots, diags)
	if l, ok := x.transforms[key]; ok {
		return l, nil
	}
	l, err := lower.LinearTransform(lower.RingOf(x.Params), level, slots, diags)
	if err != nil {
		return nil, err
	}
	if x.transforms == nil {
		x.transforms = map[string]*lower.LinearTransformProgram{}
	}
	x.transforms[key] = l
	return l, nil
}

// diagonalIndex reads d from a diagonal's name …/<dft><matrix>/diag<d>.
func diagonalIndex(name string, spec lower.BootLinearTransform) (int, error) {
	f := strings.Split(name, "/")
	if len(f) < 2 || f[len(f)-2] != spec.DFT+strconv.Itoa(spec.Matrix) || !strings.HasPrefix(f[len(f)-1], "diag") {
		return 0, fmt.Errorf("%q is not a diagonal of %s%d", name, spec.DFT, spec.Matrix)
	}
	return strconv.Atoi(strings.TrimPrefix(f[len(f)-1], "diag"))
}

// runLinearTransform runs every instance of a DFT product as one program.
func (x *Executor) runLinearTransform(p *ir.Program, h int, g *ltGroup, vals [][]Value) ([]Value, error) {
	n := p.Nodes[h]
	out := make([]Value, n.Count)
	for k := int64(0); k < n.Count; k++ {
		a := instanceRef(vals[g.input], k)
		if a.Ct == nil || a.Ct.Degree() != 1 {
			return nil, fmt.Errorf("linear transform input is not a host ciphertext of degree 1")
		}
		level := a.level()
		l, err := x.lowerTransform(level, g.spec.Slots, g.diags)
		if err != nil {
			return nil, err
		}
		mem := NewMemObjects()
		mem.Set(l.Inputs[0].Space, l.Inputs[0].ID, PolyLimbs(a.Ct.Value, level+1))
		scale := a.Ct.Scale
		for i, d := range l.Diagonals {
			s := g.stored[d]
			limbs, err := x.Diagonals.DiagonalQP(p.Nodes[s].Name, level)
			if err != nil {
				return nil, err
			}
			obj := l.Inputs[1+i]
			if len(limbs) != obj.Limbs {
				return nil, fmt.Errorf("diagonal %d has %d limbs, want %d", d, len(limbs), obj.Limbs)
			}
			mem.Set(obj.Space, obj.ID, limbs)
			if i == 0 {
				scale = scale.Mul(instanceRef(vals[s], k).meta().Scale)
			}
		}
		for i, gal := range l.Galois {
			gk, ok := x.Keys.Galois[gal]
			if !ok {
				return nil, fmt.Errorf("no Galois key for element %d", gal)
			}
			mem.Set(l.Keys[i].Space, l.Keys[i].ID, KeyLimbs(&gk.GadgetCiphertext))
		}
		m, err := NewMachine(l.Program.Program.Config, mem)
		if err != nil {
			return nil, err
		}
		st, err := m.Run(l.Program.Program)
		if err != nil {
			return nil, err
		}
		x.Stats.DeviceMicroOps += st.MicroOps
		ct := rlwe.NewCiphertext(x.Params, 1, level)
		*ct.MetaData = *a.Ct.MetaData
		ct.Scale = scale
		if !CopyLimbs(mem.Get(l.Output.Space, l.Output.ID), ct.Value, level+1) {
			return nil, fmt.Errorf("linear transform returned %d limbs, want 2×%d (diagonals %v)", len(mem.Get(l.Output.Space, l.Output.ID)), level+1, g.diags)
		}
		out[k] = Value{Ct: ct}
	}
	x.Stats.DeviceOps += g.count
	return out, nil
}
