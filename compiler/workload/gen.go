package workload

import (
	"fmt"
	"math"

	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/fhe"
)

// val is a node of a program under construction with the facts the
// generators need to place levels and bootstrapping.
type val struct {
	id    int
	level int
	count int64
}

// gen wraps an ir.Builder with level bookkeeping: multiplications rescale,
// operands are levelled down to meet, constants are added through an
// encrypted all-ones ciphertext (the IR has no plaintext addition), and
// bootstrapping is inserted where a computation needs more levels than its
// input has left (nil boot: the program must fit the chain).
type gen struct {
	b    *ir.Builder
	top  int
	boot *ir.BootSpec
	err  error
	ones *val // the all-ones input, created on first use
}

func newGen(name, params string, boot *ir.BootSpec) (*gen, error) {
	p, err := fhe.Lookup(params)
	if err != nil {
		return nil, err
	}
	if p.Scheme != fhe.CKKS {
		return nil, fmt.Errorf("workload: %s needs a CKKS preset, %s is %s", name, params, p.Scheme)
	}
	return &gen{b: ir.NewBuilder(name, params), top: p.Levels(), boot: boot}, nil
}

func (g *gen) fail(format string, a ...any) {
	if g.err == nil {
		g.err = fmt.Errorf("workload: "+format, a...)
	}
}

func (g *gen) input(name string, count int64) val {
	return val{g.b.InputN(name, g.top, count), g.top, count}
}

// stored is a device-resident object of count instances at level (weights
// and masks are encoded at the level they are used, as Lee et al. and
// NEXUS do).
func (g *gen) stored(name string, level int, count int64, plain bool) val {
	return val{g.b.Stored(name, level, count, plain), level, count}
}

// node appends a one-argument or two-argument operation with an explicit
// instance count.
func (g *gen) node(op ir.Op, count int64, level, degree int, args ...int) int {
	return g.b.Append(ir.Node{Op: op, Args: args, Level: level, Degree: degree, Count: count})
}

func maxCount(a, b val) int64 { return max(a.count, b.count) }

// down drops x to level l (no-op when it is already there).
func (g *gen) down(x val, l int) val {
	if l < 0 {
		g.fail("level below 0")
		return x
	}
	if x.level <= l {
		return x
	}
	return val{g.b.LevelDown(x.id, l), l, x.count}
}

func (g *gen) align(x, y val) (val, val) {
	l := min(x.level, y.level)
	return g.down(x, l), g.down(y, l)
}

// add returns x + y (count: the larger one).
func (g *gen) add(x, y val) val {
	x, y = g.align(x, y)
	return val{g.b.HAdd(x.id, y.id), x.level, maxCount(x, y)}
}

// sub returns x − y.
func (g *gen) sub(x, y val) val {
	x, y = g.align(x, y)
	return val{g.b.HSub(x.id, y.id), x.level, maxCount(x, y)}
}

// rescale divides by the last prime; running out of levels is an error.
func (g *gen) rescale(x val) val {
	if x.level < 1 {
		g.fail("out of levels (need bootstrapping before this point)")
		return x
	}
	return val{g.b.Rescale(x.id), x.level - 1, x.count}
}

// mulN returns x·y relinearized and rescaled, with count instances.
func (g *gen) mulN(x, y val, count int64) val {
	x, y = g.need(x, 1), g.need(y, 1)
	x, y = g.align(x, y)
	if x.level < 1 {
		g.fail("out of levels for a multiplication")
		return x
	}
	m := g.node(ir.OpHMult, count, x.level, 2, x.id, y.id)
	r := g.node(ir.OpRelinearize, count, x.level, 1, m)
	return g.rescale(val{r, x.level, count})
}

func (g *gen) mul(x, y val) val { return g.mulN(x, y, maxCount(x, y)) }

// pmulN returns x·pt rescaled (pt a Stored plaintext), with count instances.
func (g *gen) pmulN(x, pt val, count int64) val {
	x = g.need(x, 1)
	if pt.level < x.level {
		g.fail("plaintext below its ciphertext")
		return x
	}
	return g.rescale(val{g.node(ir.OpPMult, count, x.level, 1, x.id, pt.id), x.level, count})
}

// cmul returns c·x and spends one level: a non-integer constant is scaled
// by the current prime and rescaled away (Lattigo's CKKS evaluator); an
// integer one needs no scaling and the level is dropped instead, so both
// leave the result one level down at the input's scale.
func (g *gen) cmul(x val, c float64) val {
	x = g.need(x, 1)
	if x.level < 1 {
		g.fail("out of levels for a constant multiplication")
		return x
	}
	m := val{g.b.CMult(x.id, c), x.level, x.count}
	if c == math.Trunc(c) {
		return g.down(m, x.level-1)
	}
	return g.rescale(m)
}

// addConst returns x + c through the all-ones ciphertext.
func (g *gen) addConst(x val, c float64) val {
	if g.ones == nil {
		o := g.input("ones", 1)
		g.ones = &o
	}
	k := g.cmul(*g.ones, c)
	if x.level > k.level {
		x = g.down(x, k.level)
	}
	return g.add(x, k)
}

// rot rotates every instance of x left by k.
func (g *gen) rot(x val, k int) val { return g.rotCount(x, k, x.count) }

// rotCount rotates x left by k into count instances (count a multiple of
// x's count: several rotations of each instance).
func (g *gen) rotCount(x val, k int, count int64) val {
	id := g.b.Append(ir.Node{Op: ir.OpHRot, Args: []int{x.id}, Level: x.level, Degree: 1, Count: count, Rotation: k})
	return val{id, x.level, count}
}

// conj conjugates x.
func (g *gen) conj(x val) val { return val{g.b.Conjugate(x.id), x.level, x.count} }

// sum folds x into count results (consecutive groups).
func (g *gen) sum(x val, count int64) val {
	if count < 1 || x.count%count != 0 {
		g.fail("sum of %d instances into %d", x.count, count)
		return x
	}
	if count == x.count {
		return x
	}
	return val{g.b.Sum(x.id, count), x.level, count}
}

// need returns x with at least levels levels left, bootstrapping it when
// it has fewer (the multiplications call it with 1, so a value that ran
// out is bootstrapped where it is next multiplied, as NEXUS re-encrypts).
func (g *gen) need(x val, levels int) val {
	if x.level >= levels {
		return x
	}
	if g.boot == nil {
		g.fail("needs %d levels, has %d and no bootstrapping", levels, x.level)
		return x
	}
	if g.boot.OutputLevel < levels {
		g.fail("needs %d levels, bootstrapping gives %d", levels, g.boot.OutputLevel)
		return x
	}
	return val{g.b.Boot(x.id, *g.boot), g.boot.OutputLevel, x.count}
}

func (g *gen) output(name string, x val) { g.b.Output(name, x.id) }

// segment hints the nodes emitted until the returned function runs as
// belonging to a segment of kind s (ir.Node.Segment: the Bare baseline's
// manual allocation); use as defer g.segment(ir.Linear)().
func (g *gen) segment(s ir.Segment) func() {
	prev := g.b.Segment(s)
	return func() { g.b.Segment(prev) }
}

func (g *gen) build() (*ir.Program, error) {
	if g.err != nil {
		return nil, g.err
	}
	return g.b.Build()
}
