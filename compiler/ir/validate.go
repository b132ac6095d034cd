package ir

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/fhe"
)

// arity gives the number of arguments each node kind takes.
var arity = map[Op]int{
	OpInput: 0, OpStored: 0, OpOutput: 1, OpHAdd: 2, OpHSub: 2, OpPMult: 2, OpCMult: 1, OpHMult: 2,
	OpRelinearize: 1, OpHRot: 1, OpConjugate: 1, OpRescale: 1, OpLevelDown: 1, OpBoot: 1, OpSum: 1,
	OpModRaise: 1, OpExpand: 1, OpLWEScan: 2,
}

// Validate checks the program: known operations with the right number and
// kind of arguments, arguments that exist and come earlier (no cycles),
// matching parameter sets and levels, consistent counts, and no unused
// inputs. It names the first problem found.
func (p *Program) Validate() error {
	if len(p.Nodes) == 0 {
		return fmt.Errorf("ir: program %q has no nodes", p.Name)
	}
	presets := map[string]fhe.Preset{}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		where := fmt.Sprintf("ir: node %d (%s)", i, n.Op)
		switch n.Segment {
		case Unhinted, Linear, NonLinear:
		default:
			return fmt.Errorf("%s: unknown segment hint %q (linear, nonlinear)", where, n.Segment)
		}
		if n.Compact && (n.Op != OpStored || n.Degree != 0 || n.Public) {
			return fmt.Errorf("%s: only stored (non-public) plaintexts can be compact", where)
		}
		if n.LWELimbs < 0 || n.LWELimbs > 0 && (n.Degree != 0 || n.Level != 0 || n.Compact || n.Public) {
			return fmt.Errorf("%s: an LWE value has degree 0, level 0 and no compact or public form", where)
		}
		if n.StoredOffset < 0 || !n.Window && n.StoredOffset != 0 || n.Window && n.Op != OpPMult {
			return fmt.Errorf("%s: only a PMult reads a window of a stored object (offset %d)", where, n.StoredOffset)
		}
		if n.LWE != nil && n.Op != OpLWEScan {
			return fmt.Errorf("%s: only an LWE scan names an LWE database", where)
		}
		if n.Public && n.Op != OpStored {
			return fmt.Errorf("%s: only stored plaintexts can be public constants", where)
		}
		if n.ID != i {
			return fmt.Errorf("%s: id %d, want %d (nodes must be numbered in order)", where, n.ID, i)
		}
		want, ok := arity[n.Op]
		if !ok {
			return fmt.Errorf("%s: unknown operation", where)
		}
		if len(n.Args) != want {
			return fmt.Errorf("%s: takes %d argument(s), has %d", where, want, len(n.Args))
		}
		pr, ok := presets[n.Params]
		if !ok {
			var err error
			if pr, err = fhe.Lookup(n.Params); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			presets[n.Params] = pr
		}
		if n.Count < 1 {
			return fmt.Errorf("%s: count %d must be ≥ 1", where, n.Count)
		}
		if n.Compact && pr.Scheme != fhe.BGV {
			return fmt.Errorf("%s: compact plaintexts are BGV plaintexts, %s is %s", where, n.Params, pr.Scheme)
		}
		if n.Level < 0 || n.Level > pr.Levels() {
			return fmt.Errorf("%s: level %d outside [0, %d] of %s", where, n.Level, pr.Levels(), n.Params)
		}
		if n.Degree < 0 || n.Degree > 2 {
			return fmt.Errorf("%s: degree %d outside [0, 2]", where, n.Degree)
		}
		for _, a := range n.Args {
			switch {
			case a < 0 || a >= len(p.Nodes):
				return fmt.Errorf("%s: dangling argument %d (program has %d nodes)", where, a, len(p.Nodes))
			case a >= i:
				if p.DependsOn(a, i) {
					return fmt.Errorf("%s: cycle through node %d", where, a)
				}
				return fmt.Errorf("%s: argument %d comes later (nodes must be in topological order)", where, a)
			}
			arg := p.Nodes[a]
			if arg.Compact && (n.Op != OpPMult || len(n.Args) != 2 || n.Args[1] != a) {
				return fmt.Errorf("%s: compact plaintext %d can only be the plaintext operand of a PMult", where, a)
			}
			if arg.Op == OpOutput {
				return fmt.Errorf("%s: argument %d is an Output", where, a)
			}
			if arg.LWELimbs > 0 && n.Op != OpLWEScan && n.Op != OpOutput {
				return fmt.Errorf("%s: LWE values are only scanned (LWEScan) and output, argument %d", where, a)
			}
			if arg.Params != n.Params {
				return fmt.Errorf("%s: parameter mismatch: %s vs argument %d in %s", where, n.Params, a, arg.Params)
			}
			if n.Op == OpExpand {
				if arg.Count != 1 {
					return fmt.Errorf("%s: the query of an expansion is one ciphertext, argument %d has count %d", where, a, arg.Count)
				}
			} else if n.Op == OpSum || n.Op == OpLWEScan {
				if arg.Count%n.Count != 0 {
					return fmt.Errorf("%s: count %d does not divide argument count %d", where, n.Count, arg.Count)
				}
			} else if n.Window && a == n.Args[len(n.Args)-1] {
				if n.Op != OpPMult || arg.Op != OpStored || n.StoredOffset+n.Count > arg.Count {
					return fmt.Errorf("%s: a window [%d, %d) of stored plaintexts needs a PMult of a stored object of at least that many (%s %d of %d)",
						where, n.StoredOffset, n.StoredOffset+n.Count, arg.Op, a, arg.Count)
				}
			} else if n.Count%arg.Count != 0 {
				return fmt.Errorf("%s: argument %d has count %d, which does not divide %d", where, a, arg.Count, n.Count)
			}
		}
		if err := p.checkTypes(n); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	users := p.Users()
	for _, n := range p.Nodes {
		if (n.Op == OpInput || n.Op == OpStored) && len(users[n.ID]) == 0 {
			return fmt.Errorf("ir: node %d (%s %q) is never used", n.ID, n.Op, n.Name)
		}
		if n.Op != OpOutput && len(users[n.ID]) == 0 {
			return fmt.Errorf("ir: node %d (%s) result is never used (add an Output)", n.ID, n.Op)
		}
	}
	return nil
}

// DependsOn reports whether node from depends, directly or through other
// nodes, on node to (every node depends on itself). Out-of-range IDs have
// no arguments.
func (p *Program) DependsOn(from, to int) bool {
	seen := map[int]bool{}
	stack := []int{from}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == to {
			return true
		}
		if seen[v] || v < 0 || v >= len(p.Nodes) {
			continue
		}
		seen[v] = true
		stack = append(stack, p.Nodes[v].Args...)
	}
	return false
}

// checkTypes checks operand kinds, degrees and levels.
func (p *Program) checkTypes(n *Node) error {
	arg := func(i int) Node { return p.Nodes[n.Args[i]] }
	ct := func(i, maxDeg int) error {
		a := arg(i)
		if a.Degree < 1 || a.Degree > maxDeg {
			return fmt.Errorf("argument %d must be a ciphertext of degree ≤ %d (has degree %d)", a.ID, maxDeg, a.Degree)
		}
		return nil
	}
	expect := func(level, degree int) error {
		if n.Level != level {
			return fmt.Errorf("level mismatch: result level %d, want %d", n.Level, level)
		}
		if n.Degree != degree {
			return fmt.Errorf("result degree %d, want %d", n.Degree, degree)
		}
		return nil
	}
	if n.Expand != nil && n.Op != OpExpand {
		return fmt.Errorf("only Expand nodes place leaves")
	}
	switch n.Op {
	case OpInput, OpStored:
		if n.Name == "" {
			return fmt.Errorf("needs a name")
		}
		if n.Public && (n.Op != OpStored || n.Degree != 0) {
			return fmt.Errorf("only stored plaintexts can be public constants")
		}
		if n.Degree > 1 {
			return fmt.Errorf("sources are plaintexts or ciphertexts (degree 0 or 1)")
		}
	case OpOutput:
		a := arg(0)
		if a.LWELimbs > 0 {
			if n.LWELimbs != a.LWELimbs {
				return fmt.Errorf("an output of an LWE value is that value (%d limbs, not %d)", a.LWELimbs, n.LWELimbs)
			}
			return expect(0, 0)
		}
		if n.LWELimbs != 0 {
			return fmt.Errorf("the output of an RLWE value is no LWE value")
		}
		if err := ct(0, 1); err != nil {
			return err
		}
		return expect(a.Level, a.Degree)
	case OpHAdd, OpHSub:
		if err := ct(0, 2); err != nil {
			return err
		}
		if err := ct(1, 2); err != nil {
			return err
		}
		if arg(0).Level != arg(1).Level {
			return fmt.Errorf("level mismatch: arguments at levels %d and %d", arg(0).Level, arg(1).Level)
		}
		return expect(arg(0).Level, max(arg(0).Degree, arg(1).Degree))
	case OpPMult:
		if err := ct(0, 1); err != nil {
			return err
		}
		if arg(1).Degree != 0 {
			return fmt.Errorf("second argument %d must be a plaintext", arg(1).ID)
		}
		if arg(1).Level < arg(0).Level {
			return fmt.Errorf("level mismatch: plaintext at level %d below ciphertext level %d", arg(1).Level, arg(0).Level)
		}
		return expect(arg(0).Level, 1)
	case OpCMult, OpHRot, OpConjugate:
		if err := ct(0, 1); err != nil {
			return err
		}
		return expect(arg(0).Level, 1)
	case OpHMult:
		if err := ct(0, 1); err != nil {
			return err
		}
		if err := ct(1, 1); err != nil {
			return err
		}
		if arg(0).Level != arg(1).Level {
			return fmt.Errorf("level mismatch: arguments at levels %d and %d", arg(0).Level, arg(1).Level)
		}
		return expect(arg(0).Level, 2)
	case OpRelinearize:
		if arg(0).Degree != 2 {
			return fmt.Errorf("argument %d must have degree 2", arg(0).ID)
		}
		return expect(arg(0).Level, 1)
	case OpRescale:
		if err := ct(0, 1); err != nil {
			return err
		}
		if arg(0).Level == 0 {
			return fmt.Errorf("cannot rescale a level-0 ciphertext")
		}
		return expect(arg(0).Level-1, 1)
	case OpLevelDown:
		if err := ct(0, 1); err != nil {
			return err
		}
		if n.Level >= arg(0).Level {
			return fmt.Errorf("level mismatch: LevelDown to %d from %d", n.Level, arg(0).Level)
		}
		return expect(n.Level, 1)
	case OpModRaise:
		if err := ct(0, 1); err != nil {
			return err
		}
		if arg(0).Level != 0 {
			return fmt.Errorf("ModRaise needs a level-0 argument (argument %d is at level %d)", arg(0).ID, arg(0).Level)
		}
		if n.Level < 1 {
			return fmt.Errorf("ModRaise must raise to a level ≥ 1, not %d", n.Level)
		}
		return expect(n.Level, 1)
	case OpBoot:
		if err := ct(0, 1); err != nil {
			return err
		}
		if n.Boot == nil {
			return fmt.Errorf("Boot needs its bootstrapping parameters")
		}
		return expect(n.Level, 1)
	case OpSum:
		if err := ct(0, 1); err != nil {
			return err
		}
		return expect(arg(0).Level, 1)
	case OpLWEScan:
		pr, err := fhe.Lookup(n.Params)
		if err != nil {
			return err
		}
		q, d := arg(0), arg(1)
		if q.Op != OpInput || q.LWELimbs != 1 || d.Op != OpStored || d.LWELimbs != 1<<pr.LogN/4 {
			return fmt.Errorf("LWEScan takes a query input of 1 limb and a stored matrix of N/4 = %d limbs per instance", 1<<pr.LogN/4)
		}
		if q.Count != d.Count || n.Count != 1 || n.LWELimbs != 1 {
			return fmt.Errorf("LWEScan of %d query and %d matrix blocks into %d results of %d limbs: want equal blocks into one limb", q.Count, d.Count, n.Count, n.LWELimbs)
		}
		if err := checkLWESpec(n.LWE, pr.LogN, q.Count); err != nil {
			return err
		}
		return expect(0, 0)
	case OpExpand:
		if err := ct(0, 1); err != nil {
			return err
		}
		if n.Expand == nil {
			return fmt.Errorf("Expand needs its leaf placement")
		}
		pr, err := fhe.Lookup(n.Params)
		if err != nil {
			return err
		}
		if err := n.Expand.check(n.Count, pr.LogN); err != nil {
			return err
		}
		return expect(arg(0).Level, 1)
	}
	return nil
}

// checkLWESpec checks a scan's database, if named, against its blocks of
// 2^logN rows × 2^logN columns: the parameters' hint ring is the preset's,
// the rows fit one block, the columns fill the blocks.
func checkLWESpec(s *LWESpec, logN int, blocks int64) error {
	if s == nil {
		return nil
	}
	p, shape, err := s.Shape()
	if err != nil {
		return fmt.Errorf("LWEScan of database %+v: %w", *s, err)
	}
	n := 1 << logN
	if p.HintLogN != logN || shape.Rows > n || int64((shape.Cols+n-1)/n) != blocks {
		return fmt.Errorf("LWEScan of %d blocks of 2^%d: not database %+v (hint ring 2^%d)", blocks, logN, *s, p.HintLogN)
	}
	return nil
}
