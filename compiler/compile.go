package compiler

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/compiler/tdap"
)

// OptLevel is an optimisation level (Options.Opt, Plan.Opt).
type OptLevel string

// Optimisation levels.
const (
	// OptBare is the paper's manual baseline: non-linear segments on the
	// host, linear ones on the SSD.
	OptBare OptLevel = "bare"
	// OptTDAP partitions by min-cut.
	OptTDAP OptLevel = "tdap"
	// OptFull runs CLCAO, then TDAP.
	OptFull OptLevel = "full"
)

// optLevels are the valid Options.Opt values, in increasing order.
var optLevels = []OptLevel{OptBare, OptTDAP, OptFull}

// String is the level's name.
func (l OptLevel) String() string { return string(l) }

// Set reads a level's name (flag.Value).
func (l *OptLevel) Set(s string) error {
	v, err := ParseOptLevel(s)
	if err == nil {
		*l = v
	}
	return err
}

// ParseOptLevel reads an optimisation level's name ("" is OptFull).
func ParseOptLevel(s string) (OptLevel, error) {
	if s == "" {
		return OptFull, nil
	}
	if l := OptLevel(s); slices.Contains(optLevels, l) {
		return l, nil
	}
	return "", fmt.Errorf("compiler: unknown optimisation level %q (bare, tdap, full)", s)
}

// Options select the optimisation level.
type Options struct {
	// Opt is OptBare, OptTDAP or OptFull ("" is OptFull).
	Opt OptLevel
	// DumpAfter names a pass after which the IR and state are written to Dump.
	DumpAfter PassName
	Dump      io.Writer
}

// unit is the state the passes share.
type unit struct {
	prog   *ir.Program
	arch   *arch.Arch
	opt    Options
	cm     *CostModel
	costs  []NodeCost
	assign tdap.Assignment
	order  []int
	plan   *Plan
	prob   tdap.Problem
	// noRewrite disables CLCAO's rotation rewriting (hot keys are kept).
	noRewrite bool
	// optimistic costs streamable values as on chip before partitioning.
	optimistic bool
}

// PassName names a compiler pass (--dump-after).
type PassName string

// The compiler's passes, in the order they run.
const (
	PassValidate       PassName = "validate"
	PassExpandBoot     PassName = "expand-boot"
	PassCLCAORotations PassName = "clcao-rotations"
	PassCLCAOSchedule  PassName = "clcao-schedule"
	PassCLCAOResidency PassName = "clcao-residency"
	PassCost           PassName = "cost"
	PassPartitionBare  PassName = "partition-bare"
	PassPartitionTDAP  PassName = "partition-tdap"
	PassSegment        PassName = "segment"
	PassCLCAOPlacement PassName = "clcao-placement"
	PassEstimate       PassName = "estimate"
)

// pass is one compiler pass: a function over the unit, like the Go
// compiler's SSA passes. Passes run in the order of the table; a pass
// whose levels do not list the current optimisation level is skipped
// (nil levels: it always runs).
type pass struct {
	name   PassName
	fn     func(*unit) error
	levels []OptLevel
}

var passes = []pass{
	{PassValidate, passValidate, nil},
	{PassExpandBoot, passExpandBoot, nil},
	{PassCLCAORotations, passRotationKeys, []OptLevel{OptFull}},
	{PassCLCAOSchedule, passSchedule, []OptLevel{OptFull}},
	{PassCLCAOResidency, passResidencyHint, []OptLevel{OptFull}},
	{PassCost, passCost, nil},
	{PassPartitionBare, passBare, []OptLevel{OptBare}},
	{PassPartitionTDAP, passTDAP, []OptLevel{OptTDAP, OptFull}},
	{PassSegment, passSegment, nil},
	{PassCLCAOPlacement, passPlacement, nil},
	{PassEstimate, passEstimate, nil},
}

// passConstraint says pass a must run before pass b.
type passConstraint struct {
	a, b PassName
}

// passOrder is every ordering the passes rely on, checked when the package
// initialises (as the Go compiler checks its SSA pass order), so moving a
// pass in the table cannot silently break one of them.
var passOrder = []passConstraint{
	// Every pass assumes a well-formed program.
	{PassValidate, PassExpandBoot},
	// Bootstrapping's rotations are keys like any other; the cost model
	// prices expanded operations only.
	{PassExpandBoot, PassCLCAORotations},
	{PassExpandBoot, PassCost},
	// The rewrite renumbers nodes: schedule and residency work on the
	// rewritten program.
	{PassCLCAORotations, PassCLCAOSchedule},
	{PassCLCAORotations, PassCLCAOResidency},
	// The cost model reads the hot keys and the resident values.
	{PassCLCAORotations, PassCost},
	{PassCLCAOResidency, PassCost},
	// The partitions solve the problem the costs build.
	{PassCost, PassPartitionBare},
	{PassCost, PassPartitionTDAP},
	// Segments follow the assignment, and CLCAO's schedule inside each.
	{PassPartitionBare, PassSegment},
	{PassPartitionTDAP, PassSegment},
	{PassCLCAOSchedule, PassSegment},
	// Spills are counted along the final order; estimates fill the segments.
	{PassSegment, PassCLCAOPlacement},
	{PassSegment, PassEstimate},
}

func init() {
	if err := checkPasses(passes, passOrder); err != nil {
		panic(err)
	}
}

// checkPasses verifies a pass table: names unique, levels known, and every
// constraint of order naming two passes of the table in that order.
func checkPasses(table []pass, order []passConstraint) error {
	index := map[PassName]int{}
	for i, p := range table {
		if _, dup := index[p.name]; dup {
			return fmt.Errorf("compiler: pass %s listed twice", p.name)
		}
		index[p.name] = i
		for _, l := range p.levels {
			if !slices.Contains(optLevels, l) {
				return fmt.Errorf("compiler: pass %s runs at unknown level %q", p.name, l)
			}
		}
	}
	for _, c := range order {
		i, ok := index[c.a]
		if !ok {
			return fmt.Errorf("compiler: pass order names unknown pass %s", c.a)
		}
		j, ok := index[c.b]
		if !ok {
			return fmt.Errorf("compiler: pass order names unknown pass %s", c.b)
		}
		if i >= j {
			return fmt.Errorf("compiler: pass %s must run before %s", c.a, c.b)
		}
	}
	return nil
}

// PassNames lists the passes in order (for --dump-after).
func PassNames() []PassName {
	var s []PassName
	for _, p := range passes {
		s = append(s, p.name)
	}
	return s
}

// Compile partitions prog between the host and the device described by a.
func Compile(prog *ir.Program, a *arch.Arch, opt Options) (*Plan, error) {
	switch {
	case opt.Opt == "":
		opt.Opt = OptFull
	case !slices.Contains(optLevels, opt.Opt):
		return nil, fmt.Errorf("compiler: unknown optimisation level %q (bare, tdap, full)", opt.Opt)
	}
	if opt.DumpAfter != "" && !slices.Contains(PassNames(), opt.DumpAfter) {
		return nil, fmt.Errorf("compiler: no pass %q (have %v)", opt.DumpAfter, PassNames())
	}
	if opt.Opt != OptFull {
		return compile(prog, a, opt, variant{})
	}
	// CLCAO's choices interact with the partition: a rotation rewrite pays
	// off only where cold keys stream from LPDDR (the SSD), and streaming
	// keeps values on chip only if their users land on the SSD. The
	// compiler therefore tries the variants and keeps the plan with the
	// lowest estimate; the plain variant has every node cost ≤ its TDAP
	// cost, so the result never estimates slower than TDAP alone.
	var best *Plan
	for _, v := range []variant{{optimistic: true}, {optimistic: true, noRewrite: true}, {}, {noRewrite: true}} {
		plan, err := compile(prog, a, opt, v)
		if err != nil {
			return nil, err
		}
		if best == nil || plan.EstLatency < best.EstLatency {
			best = plan
		}
		if opt.DumpAfter != "" {
			break // dump one pipeline only
		}
	}
	return best, nil
}

// variant selects CLCAO alternatives.
type variant struct {
	optimistic bool // cost streamable values as on chip before partitioning
	noRewrite  bool // keep hot keys but do not rewrite cold rotations
}

func compile(prog *ir.Program, a *arch.Arch, opt Options, v variant) (*Plan, error) {
	cp := *prog
	cp.Nodes = append([]ir.Node(nil), prog.Nodes...)
	u := &unit{prog: &cp, arch: a, opt: opt, noRewrite: v.noRewrite, optimistic: v.optimistic,
		cm:   &CostModel{Arch: a, Prof: lower.Shared(), Resident: map[int]bool{}, HotKeys: map[keyRef]bool{}},
		plan: &Plan{Workload: prog.Name, Arch: a.Name, Opt: opt.Opt}}
	for _, p := range passes {
		if p.levels != nil && !slices.Contains(p.levels, opt.Opt) {
			continue
		}
		if err := p.fn(u); err != nil {
			return nil, fmt.Errorf("compiler: pass %s: %w", p.name, err)
		}
		if opt.DumpAfter == p.name && opt.Dump != nil {
			fmt.Fprintf(opt.Dump, "== after %s: %d nodes\n", p.name, len(u.prog.Nodes))
			for _, n := range u.prog.Nodes {
				fmt.Fprintf(opt.Dump, "%4d %-11s args=%v level=%d count=%d", n.ID, n.Op, n.Args, n.Level, n.Count)
				if n.ID < len(u.assign) {
					fmt.Fprintf(opt.Dump, " on=%s", u.assign[n.ID])
				}
				fmt.Fprintln(opt.Dump)
			}
		}
	}
	u.plan.Program = u.prog
	return u.plan, nil
}

func passValidate(u *unit) error { return u.prog.Validate() }

func passExpandBoot(u *unit) error {
	for _, n := range u.prog.Nodes {
		if n.Op == ir.OpBoot {
			q, err := ExpandBoot(u.prog)
			if err != nil {
				return err
			}
			u.prog = q
			return nil
		}
	}
	return nil
}

// The min-cut works on integer costs in nanoseconds: fine enough for the
// smallest operations (tens of ns) and 2^61 ns (73 years) of headroom.
const unitsPerSecond = 1e9

func toUnits(s float64) int64 {
	if s <= 0 {
		return 0
	}
	return int64(math.Round(s * unitsPerSecond))
}

func fromUnits(u int64) float64 { return float64(u) / unitsPerSecond }

func passCost(u *unit) error {
	u.cm.HostStreamed = Streamable(u.prog, func(int) bool { return true })
	keys := map[keyRef]bool{}
	var params string
	for _, n := range u.prog.Nodes {
		if k, ok := u.keyOf(n); ok {
			keys[k] = true
			params = n.Params
		}
	}
	if len(keys) > 0 {
		half, err := u.keyHalfBytes(params)
		if err != nil {
			return err
		}
		// Keys plus working data: the keys may take half the on-chip memory.
		u.cm.HostKeysOnChip = int64(len(keys))*2*half <= u.arch.Host.OnChipBytes/2
	}
	u.plan.HostKeysOnChip = u.cm.HostKeysOnChip
	u.costs = make([]NodeCost, len(u.prog.Nodes))
	prob := tdap.Problem{Nodes: make([]tdap.Node, len(u.prog.Nodes))}
	for i, n := range u.prog.Nodes {
		c, err := u.cm.Cost(u.prog, n)
		if err != nil {
			return err
		}
		u.costs[i] = c
		tn := tdap.Node{CostHost: toUnits(c.Host), CostSSD: toUnits(c.SSD)}
		switch n.Op {
		case ir.OpInput, ir.OpOutput:
			tn.Pin = tdap.PinHost
		case ir.OpStored:
			if !n.Public {
				tn.Pin = tdap.PinSSD
			}
		}
		// A value crosses the link at most once however many readers sit on
		// the other side: its transfer is the node's OutComm, its edges free.
		if n.Op != ir.OpOutput && !n.Public {
			t, err := u.cm.CommSeconds(u.prog, n)
			if err != nil {
				return err
			}
			tn.OutComm = toUnits(t)
		}
		prob.Nodes[i] = tn
		seen := map[int]bool{}
		for _, a := range n.Args {
			if seen[a] {
				continue
			}
			seen[a] = true
			prob.Edges = append(prob.Edges, tdap.Edge{From: a, To: i})
		}
	}
	u.prob = prob
	u.plan.Costs = u.costs
	return nil
}

// bareOnHost is the paper's Bare baseline ("our baseline allocation
// manually hints to the compiler and assigns all non-linear FHE segments to
// the FHE Accel and linear segments to RosemarySSD"): the workload's
// segment hint where it gives one, otherwise a per-operation rule that keeps
// ciphertext products and bootstrapping on the host.
func bareOnHost(n ir.Node) bool {
	switch n.Segment {
	case ir.NonLinear:
		return true
	case ir.Linear:
		return false
	}
	return n.Op == ir.OpHMult || n.Op == ir.OpRelinearize || n.Op == ir.OpBoot
}

func passBare(u *unit) error {
	u.assign = make(tdap.Assignment, len(u.prog.Nodes))
	for i, n := range u.prob.Nodes {
		switch {
		case n.Pin == tdap.PinHost || (n.Pin == tdap.Free && bareOnHost(u.prog.Nodes[i])):
			u.assign[i] = tdap.Host
		default:
			u.assign[i] = tdap.SSD
		}
	}
	return nil
}

func passTDAP(u *unit) error {
	a, _, err := tdap.Solve(u.prob)
	if err != nil {
		return err
	}
	u.assign = a
	return nil
}

func passSegment(u *unit) error {
	order, err := tdap.SegmentOrder(u.prob, u.assign)
	if err != nil {
		return err
	}
	if u.order != nil && u.opt.Opt == OptFull {
		// Keep CLCAO's schedule inside each device: stable by segment.
		order = stableBySegments(order, u.order, u.assign)
	}
	u.order = order
	segs, err := tdap.Segments(order, u.assign)
	if err != nil {
		return err
	}
	p := u.plan
	p.Placement = append([]Device(nil), u.assign...)
	for _, s := range segs {
		ps := PlanSegment{Device: s.Device, Nodes: s.Nodes}
		for _, v := range s.Nodes {
			if s.Device == tdap.SSD {
				b, err := u.programBytes(u.prog.Nodes[v])
				if err != nil {
					return err
				}
				ps.ProgramBytes += b
			}
		}
		p.MProgramBytes += ps.ProgramBytes
		p.Segments = append(p.Segments, ps)
	}
	return nil
}

// stableBySegments reorders the nodes of each segment of order so that
// their relative order follows pref (CLCAO's schedule), as long as every
// dependency stays satisfied; otherwise it keeps order.
func stableBySegments(order, pref []int, a tdap.Assignment) []int {
	rank := make([]int, len(pref))
	for k, v := range pref {
		rank[v] = k
	}
	// A segment reordering is only safe when pref is itself consistent with
	// the segment structure; pref is topological, so sorting each segment by
	// pref rank keeps dependencies within the segment. Across segments the
	// order is unchanged.
	out := append([]int(nil), order...)
	start := 0
	for k := 1; k <= len(out); k++ {
		if k == len(out) || a[out[k]] != a[out[start]] {
			seg := out[start:k]
			sortByRank(seg, rank)
			start = k
		}
	}
	return out
}

func sortByRank(s []int, rank []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && rank[s[j]] < rank[s[j-1]]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// programBytes is the encoded size of a node's mPrograms (all instances).
func (u *unit) programBytes(n ir.Node) (int64, error) {
	switch n.Op {
	case ir.OpInput, ir.OpStored, ir.OpOutput, ir.OpLevelDown:
		return 0, nil
	}
	prof, inst, err := u.cm.Prof.NodeWork(u.prog, n)
	if err != nil {
		return 0, err
	}
	return prof.ProgramBytes * inst, nil
}

func passEstimate(u *unit) error {
	p := u.plan
	var lat float64
	for i, d := range u.assign {
		if d == tdap.SSD {
			lat += u.costs[i].SSD
		} else {
			lat += u.costs[i].Host
		}
	}
	// Transfers: each produced value crosses at most once.
	sent := map[[2]int]bool{}
	for _, e := range u.prob.Edges {
		if u.assign[e.From] == u.assign[e.To] {
			continue
		}
		key := [2]int{e.From, int(u.assign[e.To])}
		if sent[key] || u.prog.Nodes[e.From].Public {
			continue // public constants are made where they are used
		}
		sent[key] = true
		lat += fromUnits(u.prob.Nodes[e.From].OutComm)
		b, err := u.cm.ValueBytes(u.prog, u.prog.Nodes[e.From])
		if err != nil {
			return err
		}
		p.CutBytes += b
		p.Transfers = append(p.Transfers, Transfer{Node: e.From, To: u.assign[e.To], Bytes: b})
	}
	for _, n := range u.prog.Nodes {
		if n.Op == ir.OpStored && !n.Public {
			b, err := u.cm.ValueBytes(u.prog, n)
			if err != nil {
				return err
			}
			p.HostOnlyBytes += b
		}
	}
	p.EstLatency = lat
	for k := range p.Segments {
		seg := &p.Segments[k]
		seg.EstSeconds = 0
		for _, v := range seg.Nodes {
			if seg.OnSSD() {
				seg.EstSeconds += u.costs[v].SSD
			} else {
				seg.EstSeconds += u.costs[v].Host
			}
		}
	}
	return nil
}
