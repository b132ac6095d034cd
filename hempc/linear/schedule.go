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
// single source of both the real evaluation and the counters.
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
		var err error
		switch {
		case pl.Proto == Cheetah:
			err = pl.scheduleDirect(e, ins, tile)
		case pl.BSGS:
			err = pl.scheduleBSGS(e, ins, tile)
		default:
			err = pl.schedulePacked(e, ins, tile)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scheduleDirect: Cheetah, one output per output channel (or row block).
func (pl *Plan) scheduleDirect(e engine, ins []handle, tile int) error {
	for g := 0; g < pl.Groups(); g++ {
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
		if err := e.output(acc, tile, g); err != nil {
			return err
		}
	}
	return nil
}

// schedulePacked: OptiEncode, products then a merge tree per C channels.
func (pl *Plan) schedulePacked(e engine, ins []handle, tile int) error {
	C := pl.C()
	for g := 0; g < pl.Groups(); g++ {
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
		if err := e.output(res, tile, g); err != nil {
			return err
		}
	}
	return nil
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

// scheduleBSGS: OptiEncode with the trace moved to the inputs.
func (pl *Plan) scheduleBSGS(e engine, ins []handle, tile int) error {
	C, B := pl.C(), pl.Baby
	m := uint64(2 * pl.Params.N())
	baby := make([][]handle, B)
	for v := 0; v < B; v++ {
		baby[v] = make([]handle, len(ins))
		for cb, in := range ins {
			if v == 0 {
				baby[v][cb] = in
				continue
			}
			h, err := e.automorphism(in, powMod(pl.gamma, v, m))
			if err != nil {
				return err
			}
			baby[v][cb] = h
		}
	}
	for g := 0; g < pl.Groups(); g++ {
		var res handle
		for u := 0; u < C/B; u++ {
			var inner handle
			var err error
			for v := 0; v < B; v++ {
				for cb := range ins {
					if !pl.groupTouches(g, cb) {
						continue
					}
					if inner, err = e.mulAcc(inner, baby[v][cb], plainRef{bsgs: true, group: g, u: u, v: v, cb: cb}); err != nil {
						return err
					}
				}
			}
			if u > 0 {
				if inner, err = e.automorphism(inner, powMod(pl.gamma, u*B, m)); err != nil {
					return err
				}
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
		if err := e.output(res, tile, g); err != nil {
			return err
		}
	}
	return nil
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
