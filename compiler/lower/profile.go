package lower

import (
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// Profile is what one instance of a homomorphic operation does, counted
// from its real lowering (never from separate formulas): limb kernels by
// datapath kernel, limbs moved and the size of its mProgram.
type Profile struct {
	N       int
	Kernels map[arch.Kernel]int64 // BConv counts (input, output) limb pairs; its k input scalings count as ModMul
	// InputLimbs[i] is the limbs loaded from the operation's i-th argument.
	InputLimbs  []int64
	KeyLimbs    int64 // evaluation-key limbs loaded
	OutputLimbs int64 // limbs stored
	// ProgramBytes is the encoded size of the operation's mProgram.
	ProgramBytes int64
	Instructions int64
}

// opKernel maps an ISA opcode to the datapath kernel that executes it.
var opKernel = map[isa.Opcode]arch.Kernel{
	isa.OpNTT: arch.NTT, isa.OpINTT: arch.INTT, isa.OpModAdd: arch.ModAdd, isa.OpModSub: arch.ModSub,
	isa.OpModMul: arch.ModMul, isa.OpModMAC: arch.ModMAC, isa.OpAutomorph: arch.Automorph,
	isa.OpLD: arch.Load, isa.OpST: arch.Store, isa.OpLWEMAC: arch.LWEMAC,
}

// ProfileOf counts the kernels and traffic of a lowered operation.
func ProfileOf(l *Program) Profile {
	p := l.Program
	pr := Profile{N: p.Config.N(), Kernels: map[arch.Kernel]int64{}, InputLimbs: make([]int64, len(l.Inputs)),
		ProgramBytes: int64(p.Size()), Instructions: int64(len(p.Code))}
	inputIndex := map[int]int{}
	for i, in := range l.Inputs {
		inputIndex[in.ID] = i
	}
	for _, in := range p.Code {
		switch in.Op {
		case isa.OpBConv:
			b := p.Config.Bases[in.B.Index()]
			pr.Kernels[arch.ModMul] += int64(len(b.From))
			pr.Kernels[arch.BConv] += int64(len(b.From) * len(b.To))
			continue
		case isa.OpLD:
			if in.Flags&isa.FlagKey != 0 {
				pr.KeyLimbs++
			} else if i, ok := inputIndex[in.A.Object()]; ok && in.A.Space() == isa.SpaceDRAM {
				pr.InputLimbs[i]++
			}
		case isa.OpST:
			pr.OutputLimbs++
		}
		pr.Kernels[opKernel[in.Op]]++
	}
	return pr
}

// Profiler memoizes profiles by (operation, parameters, level, degree).
type Profiler struct {
	mu    sync.Mutex
	rings map[string]Ring
	memo  map[profileKey]Profile
}

type profileKey struct {
	op     ir.Op
	params string
	level  int
	degree int
}

// NewProfiler returns an empty profiler.
func NewProfiler() *Profiler {
	return &Profiler{rings: map[string]Ring{}, memo: map[profileKey]Profile{}}
}

// shared is the process's profiler (see Shared).
var shared = NewProfiler()

// Shared returns one profiler for the whole process. A profile depends
// only on its key (operation, preset, level, operand degree), never on the
// program or the hardware, so every compilation and simulation can read
// the same cache: a reproduction compiles hundreds of plans from a few
// hundred distinct keys, and lowering an operation to count its work costs
// far more than looking it up. The cache holds one entry per key ever
// asked for (a few thousand at most).
func Shared() *Profiler { return shared }

// Ring returns the ring of a preset (deterministic primes; see fhe.Primes).
func (pf *Profiler) Ring(params string) (Ring, fhe.Preset, error) {
	pr, err := fhe.Lookup(params)
	if err != nil {
		return Ring{}, pr, err
	}
	pf.mu.Lock()
	r, ok := pf.rings[params]
	pf.mu.Unlock()
	if ok {
		return r, pr, nil
	}
	Q, P, err := pr.Primes()
	if err != nil {
		return Ring{}, pr, err
	}
	if len(P) == 0 {
		// Presets without key-switching primes (edge-only sets) cannot key
		// switch; give them one nominal P prime so the shapes still lower.
		return Ring{}, pr, fmt.Errorf("lower: preset %s has no key-switching primes", params)
	}
	r = Ring{LogN: pr.LogN, Q: Q, P: P}
	pf.mu.Lock()
	pf.rings[params] = r
	pf.mu.Unlock()
	return r, pr, nil
}

// Of returns the profile of one instance of op at the given level. Degree
// is the degree of the (first) ciphertext operand.
func (pf *Profiler) Of(op ir.Op, params string, level, degree int) (Profile, error) {
	key := profileKey{op, params, level, degree}
	pf.mu.Lock()
	p, ok := pf.memo[key]
	pf.mu.Unlock()
	if ok {
		return p, nil
	}
	ring, pr, err := pf.Ring(params)
	if err != nil {
		return Profile{}, err
	}
	ctx := &Context{Scheme: pr.Scheme, Ring: ring, T: pr.T, Level: level, Rotation: 1}
	lop := op
	switch op {
	case ir.OpModRaise:
		// level is the target; the operand is at level 0.
		ctx.Level, ctx.TargetLevel = 0, level
	case ir.OpCMult:
		ctx.Constant = make([]uint64, level+1)
		for i := range ctx.Constant {
			ctx.Constant[i] = 1
		}
	case ir.OpHAdd, ir.OpHSub:
		if degree == 2 {
			// Degree-2 additions: count as 3/2 of the degree-1 addition.
			base, err := pf.Of(op, params, level, 1)
			if err != nil {
				return Profile{}, err
			}
			p = scaleProfile(base, 3, 2)
			pf.store(key, p)
			return p, nil
		}
	}
	low, err := Op(lop, ctx)
	if err != nil {
		return Profile{}, fmt.Errorf("lower: profile %s at level %d: %w", op, level, err)
	}
	p = ProfileOf(low)
	pf.store(key, p)
	return p, nil
}

func (pf *Profiler) store(k profileKey, p Profile) {
	pf.mu.Lock()
	pf.memo[k] = p
	pf.mu.Unlock()
}

func scaleProfile(p Profile, num, den int64) Profile {
	q := Profile{N: p.N, Kernels: map[arch.Kernel]int64{}, KeyLimbs: p.KeyLimbs * num / den,
		OutputLimbs: p.OutputLimbs * num / den, ProgramBytes: p.ProgramBytes * num / den, Instructions: p.Instructions * num / den}
	for k, v := range p.Kernels {
		q.Kernels[k] = v * num / den
	}
	for _, v := range p.InputLimbs {
		q.InputLimbs = append(q.InputLimbs, v*num/den)
	}
	return q
}

// ExpandSteps is the number of expansion steps an Expand node runs: one
// per tree node on the way to its leaves, the prefix path and then a full
// binary tree over its leaves.
func ExpandSteps(n ir.Node) int64 { return int64(n.Expand.PrefixBits) + n.Count - 1 }

// NodeWork is the work of a compute node: the profile of one instance of
// the operation it runs and how many instances run. A Sum of k instances
// per group runs count·(k−1) HAdds; ModRaise is profiled at its target
// level. The cost model and the simulator both call this.
func (pf *Profiler) NodeWork(p *ir.Program, n ir.Node) (Profile, int64, error) {
	if len(n.Args) == 0 {
		return Profile{}, 0, fmt.Errorf("lower: node %d (%s) does no work", n.ID, n.Op)
	}
	first := p.Nodes[n.Args[0]]
	op, instances, level := n.Op, n.Count, first.Level
	switch n.Op {
	case ir.OpSum:
		if first.Count%n.Count != 0 {
			return Profile{}, 0, fmt.Errorf("lower: node %d: Sum of %d instances into %d groups", n.ID, first.Count, n.Count)
		}
		op, instances = ir.OpHAdd, n.Count*(first.Count/n.Count-1)
	case ir.OpModRaise:
		level = n.Level
	case ir.OpPMult:
		op = NodeOp(p, n)
	case ir.OpLWEScan:
		// One instance per block of N columns, all into one accumulator.
		instances, level = first.Count, 0
	case ir.OpExpand:
		if n.Expand == nil {
			return Profile{}, 0, fmt.Errorf("lower: node %d: Expand without its leaf placement", n.ID)
		}
		op, instances = OpExpandStep, ExpandSteps(n)
	}
	prof, err := pf.Of(op, n.Params, level, first.Degree)
	return prof, instances, err
}
