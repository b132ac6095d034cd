package linear

import "fmt"

// handle is an engine's ciphertext (a *cheetah.Ciphertext or a counting
// placeholder).
type handle interface{}

// plainRef names a server plaintext: kernel (o, cb), or BSGS (group, u, v, cb).
type plainRef struct {
	bsgs        bool
	o, cb       int
	group, u, v int
}

// engine executes the schedule's ciphertext operations. A nil accumulator
// in mulAcc means "start a new one".
type engine interface {
	input(tile, cb int) (handle, error)
	mulAcc(acc, in handle, pt plainRef) (handle, error)
	add(a, b handle) (handle, error) // a + b (may reuse a)
	sub(a, b handle) (handle, error) // a - b (may reuse a)
	monomial(h handle, k int) handle // h·X^k (new)
	automorphism(h handle, g uint64) (handle, error)
	copy(h handle) handle
	neg(h handle) handle // −h (new)
	output(h handle, tile, group int) error
}

// schedule runs the layer's ciphertext operations on an engine. It is the
// single source of both the real evaluation and the counters. Per tile it
// has three steps, each made of independent units that evaluateParallel
// spreads over workers: the inputs (per channel block), the prepared
// operands (BSGS baby steps, per step and block) and the output groups.
func (pl *Plan) schedule(e engine) error {
	for tile := 0; tile < pl.Tiles(); tile++ {
		ins := make([]handle, pl.Inputs())
		for cb := range ins {
			h, err := e.input(tile, cb)
			if err != nil {
				return err
			}
			ins[cb] = h
		}
		ops := pl.operandSlots(ins)
		for _, u := range pl.operandUnits() {
			if err := pl.operand(e, ops, u); err != nil {
				return err
			}
		}
		for g := 0; g < pl.Groups(); g++ {
			if err := pl.group(e, ops, tile, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// operandSlots returns the operands of a tile's groups: ops[v][cb] is
// σ_{γ^v}(input cb) for BSGS (v < Baby; filled by operand), and ops[0] the
// inputs otherwise.
func (pl *Plan) operandSlots(ins []handle) [][]handle {
	if !pl.BSGS {
		return [][]handle{ins}
	}
	ops := make([][]handle, pl.Baby)
	ops[0] = ins
	for v := 1; v < pl.Baby; v++ {
		ops[v] = make([]handle, len(ins))
	}
	return ops
}

// operandUnit is one baby step of one input block.
type operandUnit struct{ v, cb int }

// operandUnits lists the operands computed per tile (BSGS baby steps v ≥ 1).
func (pl *Plan) operandUnits() []operandUnit {
	if !pl.BSGS {
		return nil
	}
	var us []operandUnit
	for v := 1; v < pl.Baby; v++ {
		for cb := 0; cb < pl.Inputs(); cb++ {
			us = append(us, operandUnit{v, cb})
		}
	}
	return us
}

func (pl *Plan) operand(e engine, ops [][]handle, u operandUnit) error {
	m := uint64(2 * pl.Params.N())
	h, err := e.automorphism(ops[0][u.cb], powMod(pl.gamma, u.v, m))
	if err != nil {
		return err
	}
	ops[u.v][u.cb] = h
	return nil
}

// group computes and outputs output group g of a tile.
func (pl *Plan) group(e engine, ops [][]handle, tile, g int) error {
	switch {
	case pl.Proto == Cheetah:
		return pl.groupDirect(e, ops[0], tile, g)
	case pl.BSGS:
		return pl.groupBSGS(e, ops, tile, g)
	default:
		return pl.groupPacked(e, ops[0], tile, g)
	}
}

// groupDirect: Cheetah, one output per output channel (or row block).
func (pl *Plan) groupDirect(e engine, ins []handle, tile, g int) error {
	var acc handle
	var err error
	for cb, in := range ins {
		if !pl.touches(g, cb) {
			continue
		}
		if acc, err = e.mulAcc(acc, in, plainRef{o: g, cb: cb}); err != nil {
			return err
		}
	}
	return e.output(acc, tile, g)
}

// groupPacked: OptiEncode, products then a merge tree per C channels.
func (pl *Plan) groupPacked(e engine, ins []handle, tile, g int) error {
	C := pl.C()
	ys := make([]handle, C)
	for i := range ys {
		o := g*C + i
		if o >= pl.Shape.Co {
			break
		}
		var err error
		for cb, in := range ins {
			if !pl.touches(o, cb) {
				continue
			}
			if ys[i], err = e.mulAcc(ys[i], in, plainRef{o: o, cb: cb}); err != nil {
				return err
			}
		}
	}
	res, err := pl.mergeTree(e, ys, 0)
	if err != nil {
		return err
	}
	return e.output(res, tile, g)
}

// mergeTree computes Σ_i X^i·Tr(ys[i]) for len(ys) = 2^(LogC-j): the
// elements with even index form a, odd b, and
// a + X^(2^j)·b + τ_j(a − X^(2^j)·b) = (1+τ_j)a + X^(2^j)(1+τ_j)b,
// τ_j = X → X^(N/2^j+1), which fixes the shifts X^(2^j') (j' > j) applied
// deeper in the tree. nil entries are absent channels.
func (pl *Plan) mergeTree(e engine, ys []handle, j int) (handle, error) {
	if len(ys) == 1 {
		return ys[0], nil
	}
	var ev, od []handle
	for i, y := range ys {
		if i%2 == 0 {
			ev = append(ev, y)
		} else {
			od = append(od, y)
		}
	}
	a, err := pl.mergeTree(e, ev, j+1)
	if err != nil {
		return nil, err
	}
	b, err := pl.mergeTree(e, od, j+1)
	if err != nil {
		return nil, err
	}
	if a == nil && b == nil {
		return nil, nil
	}
	tau := uint64(pl.Params.N()>>uint(j) + 1)
	var sb handle
	if b != nil {
		sb = e.monomial(b, 1<<uint(j))
	}
	var u handle // a − X^(2^j)·b
	switch {
	case a == nil:
		u = e.neg(sb)
	case b == nil:
		u = e.copy(a)
	default:
		if u, err = e.sub(e.copy(a), sb); err != nil {
			return nil, err
		}
	}
	tu, err := e.automorphism(u, tau)
	if err != nil {
		return nil, err
	}
	res := tu
	if a != nil {
		if res, err = e.add(res, a); err != nil {
			return nil, err
		}
	}
	if sb != nil {
		if res, err = e.add(res, sb); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// groupBSGS: OptiEncode with the trace moved to the inputs; baby[v][cb] are
// the tile's baby steps.
func (pl *Plan) groupBSGS(e engine, baby [][]handle, tile, g int) error {
	var res handle
	for u := 0; u < pl.C()/pl.Baby; u++ {
		inner, err := pl.giantStep(e, baby, g, u)
		if err != nil {
			return err
		}
		if res == nil {
			res = inner
		} else if res, err = e.add(res, inner); err != nil {
			return err
		}
	}
	if res == nil {
		return fmt.Errorf("linear: empty BSGS group %d", g)
	}
	return e.output(res, tile, g)
}

// giantStep is giant step u of BSGS group g: σ_{γ^{uB}}(Σ_v Σ_cb
// baby[v][cb]·P_{g,u,v,cb}) (no automorphism for u = 0; nil if the group
// touches no input).
func (pl *Plan) giantStep(e engine, baby [][]handle, g, u int) (handle, error) {
	m := uint64(2 * pl.Params.N())
	var inner handle
	var err error
	for v := 0; v < pl.Baby; v++ {
		for cb := range baby[v] {
			if !pl.groupTouches(g, cb) {
				continue
			}
			if inner, err = e.mulAcc(inner, baby[v][cb], plainRef{bsgs: true, group: g, u: u, v: v, cb: cb}); err != nil {
				return nil, err
			}
		}
	}
	if u > 0 {
		if inner, err = e.automorphism(inner, powMod(pl.gamma, u*pl.Baby, m)); err != nil {
			return nil, err
		}
	}
	return inner, nil
}

// countEngine counts operations and bytes without computing.
type countEngine struct {
	pl *Plan
	c  Counters
}

type countCt struct{}

func (ce *countEngine) input(tile, cb int) (handle, error) {
	ce.c.InputCts++
	ce.c.BytesC2S += int64(ce.pl.Params.InputSize())
	return &countCt{}, nil
}

func (ce *countEngine) mulAcc(acc, in handle, pt plainRef) (handle, error) {
	ce.c.CPMults++
	if acc == nil {
		return &countCt{}, nil
	}
	return acc, nil
}

func (ce *countEngine) add(a, b handle) (handle, error) { return a, nil }
func (ce *countEngine) sub(a, b handle) (handle, error) { return a, nil }
func (ce *countEngine) monomial(h handle, k int) handle { return &countCt{} }
func (ce *countEngine) copy(h handle) handle            { return &countCt{} }
func (ce *countEngine) neg(h handle) handle             { return &countCt{} }

func (ce *countEngine) automorphism(h handle, g uint64) (handle, error) {
	ce.c.Automorphisms++
	return &countCt{}, nil
}

func (ce *countEngine) output(h handle, tile, group int) error {
	pos, _ := ce.pl.outputMap(tile, group)
	ce.c.OutputCts++
	ce.c.BytesS2C += int64(ce.pl.Params.OutputSize(len(pos), ce.pl.D0, ce.pl.D1))
	return nil
}
