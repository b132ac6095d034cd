package engine

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/fhe/rns"
)

// worker evaluates instances on one goroutine: its own interpreters (one
// per body), stored readers, expansion paths and buffers.
type worker struct {
	r *run
	// top: this worker runs alone, so a large Sum may spread its inputs
	// over every worker.
	top      bool
	machines map[any]*Machine
	slots    [][]uint64 // SRAM slots shared by the interpreters of bodies
	mem      bindMem
	readers  map[int]StoredReader
	gens     map[int]*expandGen
	macDone  map[int]map[int64]Limbs // sums a multiply-accumulate block computed ahead
	memo     map[int]map[int64]*memoEntry
	pool     map[int][]Limbs // free buffers by limb count

	st             Stats
	bodies, stored int64
}

func (r *run) newWorker() *worker {
	return &worker{r: r, machines: map[any]*Machine{}, readers: map[int]StoredReader{},
		gens: map[int]*expandGen{}, macDone: map[int]map[int64]Limbs{}, memo: map[int]map[int64]*memoEntry{}, pool: map[int][]Limbs{}}
}

func (w *worker) close() {
	for _, rd := range w.readers {
		rd.Close()
	}
}

// alloc returns a buffer of limbs limbs (its contents are garbage).
func (w *worker) alloc(limbs int) (Limbs, error) {
	if free := w.pool[limbs]; len(free) > 0 {
		v := free[len(free)-1]
		w.pool[limbs] = free[:len(free)-1]
		return v, nil
	}
	if err := w.r.charge(int64(limbs) * int64(w.r.s.n) * WordBytes); err != nil {
		return nil, err
	}
	v := make(Limbs, limbs)
	flat := make([]uint64, limbs*w.r.s.n)
	for i := range v {
		v[i] = flat[i*w.r.s.n : (i+1)*w.r.s.n : (i+1)*w.r.s.n]
	}
	return v, nil
}

func (w *worker) release(v Limbs) { w.pool[len(v)] = append(w.pool[len(v)], v) }

// eval returns instance k of stream node i; owned reports that the caller
// owns the buffer (it may modify or release it).
func (w *worker) eval(i int, k int64) (Limbs, bool, error) {
	sn := &w.r.s.sp.Nodes[i]
	if sn.Memo == 0 {
		return w.evalNode(i, k)
	}
	// An instance several consumers read for the same k: kept from its
	// first read to its last, which takes it over.
	m := w.memo[i]
	if m == nil {
		m = map[int64]*memoEntry{}
		w.memo[i] = m
	}
	if e, ok := m[k]; ok {
		if e.left--; e.left == 0 {
			delete(m, k)
			return e.v, true, nil
		}
		return e.v, false, nil
	}
	v, owned, err := w.evalNode(i, k)
	if err != nil {
		return nil, false, err
	}
	if !owned {
		c, err := w.alloc(len(v))
		if err != nil {
			return nil, false, err
		}
		for l := range v {
			copy(c[l], v[l])
		}
		v = c
	}
	m[k] = &memoEntry{v: v, left: sn.Memo - 1}
	return v, false, nil
}

// memoEntry is an instance kept for its remaining reads.
type memoEntry struct {
	v    Limbs
	left int
}

// evalNode computes instance k of node i (or takes it from the held
// instances).
func (w *worker) evalNode(i int, k int64) (Limbs, bool, error) {
	r := w.r
	sn := &r.s.sp.Nodes[i]
	if c := r.cache[i]; c != nil {
		return c[k], false, nil
	}
	switch sn.Kind {
	case lower.StreamInput:
		v, err := r.src.Input(i, k%sn.Count)
		if err != nil {
			return nil, false, fmt.Errorf("engine: input %q instance %d: %w", sn.Name, k%sn.Count, err)
		}
		if err := w.checkShape(v, sn); err != nil {
			return nil, false, fmt.Errorf("engine: input %q instance %d: %w", sn.Name, k, err)
		}
		return v, false, nil
	case lower.StreamStored:
		rd, ok := w.readers[i]
		if !ok {
			var err error
			if rd, err = r.src.Stored(r.ctx, i); err != nil {
				return nil, false, fmt.Errorf("engine: stored %q: %w", sn.Name, err)
			}
			w.readers[i] = rd
		}
		v, err := rd.Instance(k)
		if err != nil {
			return nil, false, fmt.Errorf("engine: stored %q instance %d: %w", sn.Name, k, err)
		}
		if err := w.checkShape(v, sn); err != nil {
			return nil, false, fmt.Errorf("engine: stored %q instance %d: %w", sn.Name, k, err)
		}
		w.stored++
		return v, false, nil
	case lower.StreamOp:
		var args [4]Limbs
		var owned [4]bool
		defer func() {
			for j := range sn.Args {
				if owned[j] {
					w.release(args[j])
				}
			}
		}()
		for j, a := range sn.Args {
			var err error
			if args[j], owned[j], err = w.eval(a, k%r.s.sp.Nodes[a].Count); err != nil {
				return nil, false, err
			}
		}
		out, err := w.alloc(sn.Polys * sn.Limbs)
		if err != nil {
			return nil, false, err
		}
		if err := w.runBody(sn.Body, args[:len(sn.Args)], out); err != nil {
			w.release(out)
			return nil, false, fmt.Errorf("engine: node %d instance %d: %w", sn.Node, k, err)
		}
		return out, true, nil
	case lower.StreamSum:
		g := r.s.sp.Nodes[sn.Args[0]].Count / sn.Count
		if sn.MAC != nil {
			g = sn.Products / sn.Count
			if v, ok := w.macDone[i][k]; ok {
				delete(w.macDone[i], k)
				return v, true, nil
			}
		}
		if w.top && len(r.workers) > 1 && g >= 2*int64(len(r.workers)) && (sn.MAC == nil || sn.Count == 1) {
			acc, err := w.spreadSum(i, k*g, g)
			return acc, err == nil, err
		}
		if sn.MAC != nil {
			return w.macBlock(i, k)
		}
		acc, err := w.sum(sn.Args[0], k*g, k*g+g)
		return acc, err == nil, err
	case lower.StreamExpand:
		gen, ok := w.gens[i]
		if !ok {
			var err error
			if gen, err = w.newExpandGen(i); err != nil {
				return nil, false, err
			}
			w.gens[i] = gen
		}
		v, err := gen.leaf(k)
		return v, false, err
	}
	return nil, false, fmt.Errorf("engine: stream node %d of kind %s", i, sn.Kind)
}

func (w *worker) checkShape(v Limbs, sn *lower.StreamNode) error {
	if len(v) != sn.Polys*sn.Limbs {
		return fmt.Errorf("%d limbs, want %d polys × %d limbs", len(v), sn.Polys, sn.Limbs)
	}
	for _, l := range v {
		if len(l) != w.r.s.n {
			return fmt.Errorf("limb of %d coefficients, want %d", len(l), w.r.s.n)
		}
	}
	return nil
}

// fold folds the instances [first, last) of what Sum node i sums.
func (w *worker) fold(i int, first, last int64) (Limbs, error) {
	sn := &w.r.s.sp.Nodes[i]
	if sn.MAC != nil {
		outs, err := w.mac(sn, [][2]int64{{first, last}})
		if err != nil {
			return nil, err
		}
		return outs[0], nil
	}
	return w.sum(sn.Args[0], first, last)
}

// macBlock computes sum k of a multiply-accumulate node together with the
// following sums up to the next multiple of its lanes (each lane folds one
// sum, product t of every lane in turn), keeps the others for the calls
// that ask for them next, and returns sum k.
func (w *worker) macBlock(i int, k int64) (Limbs, bool, error) {
	sn := &w.r.s.sp.Nodes[i]
	lanes := int64(sn.MAC.Lanes)
	end := min(sn.Count, (k/lanes+1)*lanes)
	g := sn.Products / sn.Count
	var ranges [][2]int64
	for s := k; s < end; s++ {
		ranges = append(ranges, [2]int64{s * g, s*g + g})
	}
	outs, err := w.mac(sn, ranges)
	if err != nil {
		return nil, false, err
	}
	if len(outs) > 1 {
		if w.macDone[i] == nil {
			w.macDone[i] = map[int64]Limbs{}
		}
		for j, o := range outs[1:] {
			w.macDone[i][k+1+int64(j)] = o
		}
	}
	return outs[0], true, nil
}

// sum folds instances [first, last) of node a (HAdd, modulo q_i limb by
// limb: the MODADD kernel the HAdd body runs, into an accumulator held in
// place instead of a load and store per instance).
func (w *worker) sum(a int, first, last int64) (Limbs, error) {
	acc, owned, err := w.eval(a, first)
	if err != nil {
		return nil, err
	}
	if !owned {
		c, err := w.alloc(len(acc))
		if err != nil {
			return nil, err
		}
		for i := range acc {
			copy(c[i], acc[i])
		}
		acc = c
	}
	limbs := w.r.s.sp.Nodes[a].Limbs
	for k := first + 1; k < last; k++ {
		if err := w.r.ctx.Err(); err != nil {
			w.release(acc)
			return nil, err
		}
		x, owned, err := w.eval(a, k)
		if err != nil {
			w.release(acc)
			return nil, err
		}
		for i := range acc {
			rns.Add(acc[i], x[i], acc[i], w.r.s.mods[i%limbs].Q)
		}
		if owned {
			w.release(x)
		}
	}
	return acc, nil
}

// mac runs the multiply-accumulate loop of a fused Sum: lane j folds the
// products ranges[j] (all of one length), product t of every lane in
// turn, so an operand the lanes share is read once while on chip; the
// accumulators stay in the interpreter's slots.
func (w *worker) mac(sn *lower.StreamNode, ranges [][2]int64) ([]Limbs, error) {
	m, err := w.machine(sn.MAC, sn.MAC.First[0])
	if err != nil {
		return nil, err
	}
	if len(ranges) > sn.MAC.Lanes {
		return nil, fmt.Errorf("engine: %d sums at once, the loop has %d lanes", len(ranges), sn.MAC.Lanes)
	}
	sp := w.r.s.sp
	ct, pt := sn.Args[0], sn.Args[1]
	n := ranges[0][1] - ranges[0][0]
	for t := int64(0); t < n; t++ {
		if err := w.r.ctx.Err(); err != nil {
			return nil, err
		}
		for j, rg := range ranges {
			k := rg[0] + t
			a, ownA, err := w.eval(ct, k%sp.Nodes[ct].Count)
			if err != nil {
				return nil, err
			}
			b, ownB, err := w.eval(pt, k%sp.Nodes[pt].Count)
			if err != nil {
				if ownA {
					w.release(a)
				}
				return nil, err
			}
			prog := sn.MAC.Next[j]
			if t == 0 {
				prog = sn.MAC.First[j]
			}
			err = w.runProgram(m, prog, sn.MAC.Inputs, []Limbs{a, b}, lower.Object{}, nil, nil)
			if ownA {
				w.release(a)
			}
			if ownB {
				w.release(b)
			}
			if err != nil {
				return nil, fmt.Errorf("engine: node %d product %d: %w", sn.Node, k, err)
			}
		}
	}
	outs := make([]Limbs, len(ranges))
	w.mem.outID = sn.MAC.Output.ID
	for j := range ranges {
		out, err := w.alloc(sn.Polys * sn.Limbs)
		if err != nil {
			return nil, err
		}
		if err := w.runProgram(m, sn.MAC.Flush[j], nil, nil, lower.Object{}, nil, out); err != nil {
			w.release(out)
			return nil, fmt.Errorf("engine: node %d: %w", sn.Node, err)
		}
		outs[j] = out
	}
	return outs, nil
}

// spreadSum splits one large fold over every worker and adds the partial
// sums.
func (w *worker) spreadSum(i int, base, g int64) (Limbs, error) {
	ws := w.r.workers
	parts := make([]Limbs, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for wi, x := range ws {
		first, last := base+split(g, wi, len(ws)), base+split(g, wi+1, len(ws))
		if first == last {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			top := x.top
			x.top = false
			parts[wi], errs[wi] = x.fold(i, first, last)
			x.top = top
		}()
	}
	wg.Wait()
	var acc Limbs
	err := errors.Join(errs...)
	limbs := w.r.s.sp.Nodes[i].Limbs
	for wi, p := range parts {
		switch {
		case p == nil:
		case err != nil:
			ws[wi].release(p)
		case acc == nil:
			acc = p
		default:
			for l := range acc {
				rns.Add(acc[l], p[l], acc[l], w.r.s.mods[l%limbs].Q)
			}
			ws[wi].release(p)
		}
	}
	return acc, err
}

// split is the start of part k of [0, n) cut into parts pieces, on a
// multiple of lower.MACLanes where the pieces are large enough: the
// blocks a multiply-accumulate loop computes ahead then stay within one
// worker's part.
func split(n int64, k, parts int) int64 {
	at := n * int64(k) / int64(parts)
	if k == parts {
		return n
	}
	return at - at%lower.MACLanes
}

// runBody runs one body with its inputs bound to args and its output
// written into out.
func (w *worker) runBody(l *lower.Program, args []Limbs, out Limbs) error {
	m, err := w.machine(l, l.Program)
	if err != nil {
		return err
	}
	var key Limbs
	var keyObj lower.Object
	if name := l.KeyName(); name != "" {
		if key, err = w.r.key(name); err != nil {
			return err
		}
		keyObj = l.Keys[0]
	}
	w.mem.outID = l.Output.ID
	return w.runProgram(m, l.Program, l.Inputs, args, keyObj, key, out)
}

// machine returns the worker's interpreter for the programs of owner. A
// body's interpreter keeps nothing between runs, and a worker runs one
// body at a time: they share the worker's slots. A multiply-accumulate
// loop keeps its accumulator in its slots between runs (while other bodies
// produce its operands): it has its own.
func (w *worker) machine(owner any, p *isa.Program) (*Machine, error) {
	if m, ok := w.machines[owner]; ok {
		return m, nil
	}
	// What the interpreter allocates beyond the shared slots (its eDRAM
	// slots, a private loop's SRAM slots, a scratch limb) is value memory
	// of the run like any other.
	_, private := owner.(*lower.MACProgram)
	own := int64(p.Config.EDRAMSlots) + 1
	if private {
		own += int64(p.Config.SRAMSlots)
	}
	if err := w.r.charge(own * int64(w.r.s.n) * WordBytes); err != nil {
		return nil, err
	}
	var slots [][]uint64
	if !private {
		if w.slots == nil {
			if err := w.r.charge(int64(w.r.s.slots) * int64(w.r.s.n) * WordBytes); err != nil {
				return nil, err
			}
			w.slots = make([][]uint64, w.r.s.slots)
			flat := make([]uint64, w.r.s.slots*w.r.s.n)
			for i := range w.slots {
				w.slots[i] = flat[i*w.r.s.n : (i+1)*w.r.s.n : (i+1)*w.r.s.n]
			}
		}
		slots = w.slots
	}
	m, err := NewMachineSlots(p.Config, &w.mem, slots)
	if err != nil {
		w.r.charge(-own * int64(w.r.s.n) * WordBytes)
		return nil, err
	}
	w.machines[owner] = m
	return m, nil
}

// runProgram binds inputs (and a key) and runs p on m; out, if not nil,
// receives the writes to the output object (w.mem.outID).
func (w *worker) runProgram(m *Machine, p *isa.Program, inputs []lower.Object, args []Limbs, keyObj lower.Object, key, out Limbs) error {
	w.mem.reset()
	for j, obj := range inputs {
		if err := w.mem.bind(isa.SpaceDRAM, obj, args[j]); err != nil {
			return err
		}
	}
	if key != nil {
		if err := w.mem.bind(isa.SpaceNAND, keyObj, key); err != nil {
			return fmt.Errorf("key: %w", err)
		}
	}
	w.mem.out = out
	if g := w.r.opt.Gate; g != nil {
		release, err := g.Acquire(w.r.ctx)
		if err != nil {
			w.mem.out = nil
			return err
		}
		defer release()
	}
	st, err := m.Run(p)
	w.st.Instructions += st.Instructions
	w.st.MicroOps += st.MicroOps
	w.bodies++
	w.mem.out = nil
	return err
}

// bindMem is the ObjectMemory of a body run: its input objects view the
// argument values (which may hold more limbs per poly than the body reads),
// its output object is written into the caller's buffer.
type bindMem struct {
	objs  []bound
	out   Limbs
	outID int
}

type bound struct {
	space     isa.Space
	id        int
	v         Limbs
	objLimbs  int // limbs per poly of the object the body reads
	valLimbs  int // limbs per poly of the value
	polyCount int
}

func (m *bindMem) reset() { m.objs = m.objs[:0] }

func (m *bindMem) bind(s isa.Space, obj lower.Object, v Limbs) error {
	if len(v)%obj.Polys != 0 {
		return fmt.Errorf("value of %d limbs bound to an object of %d polys", len(v), obj.Polys)
	}
	per := len(v) / obj.Polys
	if per < obj.Limbs {
		return fmt.Errorf("value of %d limbs per poly bound to an object of %d", per, obj.Limbs)
	}
	m.objs = append(m.objs, bound{space: s, id: obj.ID, v: v, objLimbs: obj.Limbs, valLimbs: per, polyCount: obj.Polys})
	return nil
}

func (m *bindMem) limb(s isa.Space, obj, limb int) ([]uint64, error) {
	if s == isa.SpaceDRAM && obj == m.outID && m.out != nil {
		if limb >= len(m.out) {
			return nil, fmt.Errorf("engine: output limb %d of %d", limb, len(m.out))
		}
		return m.out[limb], nil
	}
	for i := range m.objs {
		b := &m.objs[i]
		if b.space != s || b.id != obj {
			continue
		}
		p, l := limb/b.objLimbs, limb%b.objLimbs
		if p >= b.polyCount {
			return nil, fmt.Errorf("engine: limb %d of object %s[%d] (%d polys × %d limbs)", limb, s, obj, b.polyCount, b.objLimbs)
		}
		return b.v[p*b.valLimbs+l], nil
	}
	return nil, fmt.Errorf("engine: body reads object %s[%d], which is not bound", s, obj)
}

// ReadLimb implements ObjectMemory.
func (m *bindMem) ReadLimb(s isa.Space, obj, limb int, dst []uint64) error {
	v, err := m.limb(s, obj, limb)
	if err != nil {
		return err
	}
	copy(dst, v)
	return nil
}

// ViewLimb implements LimbViewer. Bound values are checked where they
// enter the run (the device checks inputs, keys and stored limbs), so no
// coefficient check is repeated per view.
func (m *bindMem) ViewLimb(s isa.Space, obj, limb int, _ uint64) ([]uint64, error) {
	return m.limb(s, obj, limb)
}

// WriteLimb implements ObjectMemory: only the output object is written.
func (m *bindMem) WriteLimb(s isa.Space, obj, limb int, src []uint64) error {
	if s != isa.SpaceDRAM || obj != m.outID || m.out == nil || limb >= len(m.out) {
		return fmt.Errorf("engine: body writes limb %d of %s[%d], not its output", limb, s, obj)
	}
	copy(m.out[limb], src)
	return nil
}
