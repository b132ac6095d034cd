package compiler

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// ObjectRef names the device object that holds one instance of a node's
// value (or an evaluation key) in a segment's mProgram.
type ObjectRef struct {
	Node     int       `json:"node"` // -1 for keys
	Instance int64     `json:"instance"`
	Key      string    `json:"key,omitempty"` // lower.Program.KeyName: "rlk" or "gal:<element>"
	Space    isa.Space `json:"space"`
	ID       int       `json:"id"`
	Polys    int       `json:"polys"`
	Limbs    int       `json:"limbs"`
}

// SegmentProgram is one device segment as a single mProgram with static
// addresses: operands arriving from the host (or produced by earlier device
// segments) sit in DRAM objects, stored objects and keys are read from
// NAND, and the segment's values leave through DRAM objects.
type SegmentProgram struct {
	Program *isa.Program
	Inputs  []ObjectRef // DRAM objects the host must place before the run
	Stored  []ObjectRef // NAND objects of Stored node instances
	Keys    []ObjectRef // NAND key objects
	Outputs []ObjectRef // DRAM objects holding every value the segment produces
}

// MaxSegmentInstructions bounds a materialised segment program.
const MaxSegmentInstructions = 1 << 22

// SegmentProgram materialises device segment seg of the plan for the ring
// ring (the real primes of the keys in use) as one mProgram.
func (p *Plan) SegmentProgram(seg int, ring lower.Ring, scheme fhe.Scheme, t uint64) (*SegmentProgram, error) {
	if seg < 0 || seg >= len(p.Segments) || !p.Segments[seg].OnSSD() {
		return nil, fmt.Errorf("compiler: segment %d is not a device segment", seg)
	}
	prog := p.Program
	m := &merger{cfg: isa.Config{LogN: ring.LogN, Moduli: append(append([]uint64(nil), ring.Q...), ring.P...)},
		scalars: map[uint64]int{}, gal: map[uint64]int{}, bases: map[string]int{},
		objs: map[[2]int64]ObjectRef{}, keys: map[string]ObjectRef{}}
	sp := &SegmentProgram{}
	inSeg := map[int]bool{}
	for _, v := range p.Segments[seg].Nodes {
		inSeg[v] = true
	}
	// operand returns the object of instance k of node a, registering it.
	operand := func(a int, k int64, polys, limbs int) ObjectRef {
		key := [2]int64{int64(a), k}
		if o, ok := m.objs[key]; ok {
			return o
		}
		o := ObjectRef{Node: a, Instance: k, Polys: polys, Limbs: limbs}
		if prog.Nodes[a].Op == ir.OpStored {
			m.nextNAND++
			o.Space, o.ID = isa.SpaceNAND, m.nextNAND
			sp.Stored = append(sp.Stored, o)
		} else {
			m.nextDRAM++
			o.Space, o.ID = isa.SpaceDRAM, m.nextDRAM
			if !inSeg[a] {
				sp.Inputs = append(sp.Inputs, o)
			}
		}
		m.objs[key] = o
		return o
	}
	for _, v := range p.Segments[seg].Nodes {
		n := prog.Nodes[v]
		switch n.Op {
		case ir.OpStored, ir.OpInput, ir.OpOutput:
			continue
		case ir.OpLevelDown, ir.OpBoot:
			return nil, fmt.Errorf("compiler: node %d: %s has no device lowering", v, n.Op)
		}
		type step struct {
			op       ir.Op
			args     [][2]int64 // (node, instance)
			out      [2]int64
			level    int
			rotation int
			constant float64
		}
		var steps []step
		first := prog.Nodes[n.Args[0]]
		if n.Op == ir.OpLWEScan {
			return nil, fmt.Errorf("compiler: node %d: an LWE scan is answered natively by the device (QueryLWE), not as a static mProgram", v)
		}
		if n.Op == ir.OpSum {
			k := first.Count / n.Count
			for j := int64(0); j < n.Count; j++ {
				acc := [2]int64{int64(n.Args[0]), j * k}
				for t := int64(1); t < k; t++ {
					out := [2]int64{int64(v), j}
					if t < k-1 {
						out = [2]int64{-int64(v) - 2, j*k + t} // scratch accumulator
					}
					steps = append(steps, step{op: ir.OpHAdd, args: [][2]int64{acc, {int64(n.Args[0]), j*k + t}}, out: out, level: first.Level})
					acc = out
				}
				if k == 1 {
					steps = append(steps, step{op: ir.OpHAdd, args: [][2]int64{acc}, out: [2]int64{int64(v), j}, level: first.Level})
				}
			}
		} else {
			for k := int64(0); k < n.Count; k++ {
				st := step{op: lower.NodeOp(prog, n), out: [2]int64{int64(v), k}, level: first.Level, rotation: n.Rotation, constant: n.Constant}
				for i, a := range n.Args {
					inst := k % prog.Nodes[a].Count
					if n.Window && i == len(n.Args)-1 {
						inst = n.StoredOffset + k
					}
					st.args = append(st.args, [2]int64{int64(a), inst})
				}
				steps = append(steps, st)
			}
		}
		for _, st := range steps {
			if len(st.args) == 1 && st.op == ir.OpHAdd {
				return nil, fmt.Errorf("compiler: node %d: a Sum of one instance is a copy; not materialised", v)
			}
			ctx := &lower.Context{Scheme: scheme, Ring: ring, T: t, Level: st.level, Rotation: st.rotation}
			if st.op == ir.OpCMult {
				return nil, fmt.Errorf("compiler: node %d: CMult constants depend on the scheme's encoder; run it through the executor", v)
			}
			l, err := lower.Op(st.op, ctx)
			if err != nil {
				return nil, err
			}
			remap := map[[2]int]ObjectRef{}
			for i, in := range l.Inputs {
				a := st.args[i]
				var o ObjectRef
				if a[0] < 0 {
					o = m.scratch(a, in.Polys, in.Limbs)
				} else {
					o = operand(int(a[0]), a[1], in.Polys, in.Limbs)
				}
				remap[[2]int{int(in.Space), in.ID}] = o
			}
			for _, kobj := range l.Keys {
				name := l.KeyName()
				o, ok := m.keys[name]
				if !ok {
					m.nextNAND++
					o = ObjectRef{Node: -1, Key: name, Space: isa.SpaceNAND, ID: m.nextNAND, Polys: kobj.Polys, Limbs: kobj.Limbs}
					m.keys[name] = o
					sp.Keys = append(sp.Keys, o)
				}
				remap[[2]int{int(kobj.Space), kobj.ID}] = o
			}
			var outRef ObjectRef
			if st.out[0] < 0 {
				outRef = m.scratch(st.out, l.Output.Polys, l.Output.Limbs)
			} else {
				outRef = operand(int(st.out[0]), st.out[1], l.Output.Polys, l.Output.Limbs)
			}
			remap[[2]int{int(l.Output.Space), l.Output.ID}] = outRef
			if err := m.append(l.Program, remap); err != nil {
				return nil, err
			}
			if len(m.code) > MaxSegmentInstructions {
				return nil, fmt.Errorf("compiler: segment %d exceeds %d instructions; it runs op by op instead", seg, MaxSegmentInstructions)
			}
		}
	}
	for key, o := range m.objs {
		if key[0] >= 0 && inSeg[int(key[0])] && prog.Nodes[key[0]].Op != ir.OpStored {
			sp.Outputs = append(sp.Outputs, o)
		}
	}
	m.cfg.SRAMSlots = m.maxSlots
	sp.Program = &isa.Program{Config: m.cfg, Code: m.code}
	if err := sp.Program.Validate(); err != nil {
		return nil, fmt.Errorf("compiler: segment %d: %w", seg, err)
	}
	return sp, nil
}

// merger concatenates lowered programs into one, interning config entries
// and renaming objects.
type merger struct {
	cfg          isa.Config
	code         []isa.Instr
	scalars, gal map[uint64]int
	bases        map[string]int
	objs         map[[2]int64]ObjectRef
	keys         map[string]ObjectRef
	nextDRAM     int
	nextNAND     int
	maxSlots     int
}

func (m *merger) scratch(key [2]int64, polys, limbs int) ObjectRef {
	if o, ok := m.objs[key]; ok {
		return o
	}
	m.nextDRAM++
	o := ObjectRef{Node: int(key[0]), Instance: key[1], Space: isa.SpaceDRAM, ID: m.nextDRAM, Polys: polys, Limbs: limbs}
	m.objs[key] = o
	return o
}

func (m *merger) append(p *isa.Program, remap map[[2]int]ObjectRef) error {
	c := &p.Config
	m.maxSlots = max(m.maxSlots, c.SRAMSlots)
	for _, in := range p.Code {
		switch {
		case in.Op == isa.OpAutomorph:
			in.B = isa.Imm(isa.Intern(m.gal, &m.cfg.Galois, c.Galois[in.B.Index()]))
		case in.Op == isa.OpBConv:
			b := c.Bases[in.B.Index()]
			key := fmt.Sprint(b.From, b.To)
			i, ok := m.bases[key]
			if !ok {
				i = len(m.cfg.Bases)
				m.cfg.Bases = append(m.cfg.Bases, b)
				m.bases[key] = i
			}
			in.B = isa.Imm(i)
		case in.Flags&isa.FlagScalarB != 0:
			in.B = isa.Imm(isa.Intern(m.scalars, &m.cfg.Scalars, c.Scalars[in.B.Index()]))
		}
		for _, a := range []*isa.Addr{&in.A, &in.Out} {
			if s := a.Space(); s == isa.SpaceDRAM || s == isa.SpaceNAND {
				o, ok := remap[[2]int{int(s), a.Object()}]
				if !ok {
					return fmt.Errorf("compiler: lowered program names unknown object %v", *a)
				}
				*a = isa.Obj(o.Space, o.ID, a.Limb())
			}
		}
		m.code = append(m.code, in)
	}
	return nil
}
