package compiler

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
)

// scheduleByScan is passSchedule as it was before its heap: at every step
// a scan of all ready nodes for the least (delta, ID). It is the reference
// the heap must match order for order.
func scheduleByScan(p *ir.Program, wordBits int) []int {
	n := len(p.Nodes)
	users := p.Users()
	remaining := make([]int, n)
	for i := range users {
		remaining[i] = len(users[i])
	}
	waiting := make([]int, n)
	var ready []int
	for i, nd := range p.Nodes {
		waiting[i] = len(uniq(nd.Args))
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}
	size := func(v int) int64 {
		b, _ := p.Bytes(p.Nodes[v], wordBits)
		return b
	}
	order := make([]int, 0, n)
	for len(ready) > 0 {
		best, bestDelta := -1, int64(0)
		for k, v := range ready {
			delta := size(v)
			for _, a := range uniq(p.Nodes[v].Args) {
				if remaining[a] == 1 {
					delta -= size(a)
				}
			}
			if best < 0 || delta < bestDelta || (delta == bestDelta && v < ready[best]) {
				best, bestDelta = k, delta
			}
		}
		v := ready[best]
		ready = append(ready[:best], ready[best+1:]...)
		order = append(order, v)
		for _, a := range uniq(p.Nodes[v].Args) {
			remaining[a]--
		}
		for _, w := range users[v] {
			waiting[w]--
			if waiting[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	return order
}

// randomProgram is a random CKKS program: inputs and stored operands at
// various levels, products (some of a value by itself), sums, rotations and
// rescales over earlier values, so that sizes, fan-outs and last uses vary.
func randomProgram(t *testing.T, rng *rand.Rand, ops int) *ir.Program {
	t.Helper()
	b := ir.NewBuilder("random", bootPreset)
	var vals []int
	level := map[int]int{}
	for k := 0; k < 1+rng.Intn(4); k++ {
		l := 2 + rng.Intn(8)
		v := b.Input("x", l)
		vals = append(vals, v)
		level[v] = l
	}
	used := map[int]bool{}
	pick := func() int {
		// Prefer recent values, as real programs do, with some far reads.
		v := vals[max(0, len(vals)-1-rng.Intn(6))]
		if rng.Intn(4) == 0 {
			v = vals[rng.Intn(len(vals))]
		}
		return v
	}
	for k := 0; k < ops; k++ {
		x := pick()
		l := level[x]
		var v int
		switch rng.Intn(6) {
		case 0:
			y := pick()
			if level[y] != l {
				y = x
			}
			used[y] = true
			v = b.HAdd(x, y)
		case 1:
			v = b.MulRelin(x, x)
		case 2:
			v = b.HRot(x, 1+rng.Intn(16))
		case 3:
			v = b.PMult(x, b.Stored("w", l, 1, true))
		case 4:
			if l > 1 {
				v = b.Rescale(b.MulRelin(x, x))
				l--
			} else {
				v = b.HAdd(x, x)
			}
		default:
			v = b.CMult(x, 3)
		}
		used[x] = true
		vals = append(vals, v)
		level[v] = l
	}
	for _, v := range vals {
		if !used[v] {
			b.Output("y", b.HAdd(v, v)) // every result is read
		}
	}
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScheduleMatchesScan holds passSchedule's heap to the scan it
// replaced, on random programs and on an expanded bootstrapping (some
// thousand nodes, wide fan-outs): the orders must be equal.
func TestScheduleMatchesScan(t *testing.T) {
	a, err := arch.Preset("rosemary")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	var progs []*ir.Program
	for k := 0; k < 200; k++ {
		progs = append(progs, randomProgram(t, rng, 1+rng.Intn(60)))
	}
	progs = append(progs, mustExpandBoot(t, buildBootProgram(t, lattigoDefaultSpec)))
	for k, p := range progs {
		u := &unit{prog: p, arch: a, cm: &CostModel{Arch: a}}
		if err := passSchedule(u); err != nil {
			t.Fatalf("program %d: %v", k, err)
		}
		want := scheduleByScan(p, a.Engine.WordBits)
		if !slices.Equal(u.order, want) {
			t.Fatalf("program %d (%d nodes): heap order %v, scan order %v", k, len(p.Nodes), u.order, want)
		}
	}
	t.Logf("%d programs, the last %d nodes", len(progs), len(progs[len(progs)-1].Nodes))
}
