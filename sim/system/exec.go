package system

import (
	"fmt"
	"sort"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/fhe"
	"github.com/rosemary-fhe/rosemary/ir"
	"github.com/rosemary-fhe/rosemary/sim/des"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
	"github.com/rosemary-fhe/rosemary/sim/ssd"
	"github.com/rosemary-fhe/rosemary/store/layout"
)

// window is the tiles of one node in flight at once (loaded, computing or
// storing): triple buffering, so the next tile's loads overlap the current
// tile's compute and the previous tile's store.
const window = 3

type device int

const (
	onHost device = iota
	onSSD
)

func (d device) String() string {
	if d == onSSD {
		return "ssd"
	}
	return "host"
}

// tier is where a value lives on a device.
type tier int

const (
	tierFree tier = iota // host on-chip memory (hidden by the pipeline, as in the cost model) or not modelled (CPU)
	tierSRAM
	tierDRAM // the SSD's LPDDR
	tierHBM
	tierNAND
)

type kind int

const (
	kindInput kind = iota
	kindStored
	kindOutput
	kindPass // LevelDown: no work
	kindCompute
)

type node struct {
	ir       ir.Node
	kind     kind
	dev      device
	prof     compiler.Profile
	units    int64 // Count (groups for Sum)
	k        int64 // Sum: input instances per group
	tiles    int64
	issued   int64
	inflight int64
	done     int64
	finished bool
	streamed bool
	// hostFused: a host value the host accelerator produces and consumes
	// instance by instance (compiler.Streamable): held on chip, not in HBM.
	hostFused bool
	arrived   [2]bool
	tierOn    [2]tier
	bytes     int64 // all instances of the value
	logN      int
	users     []int
}

// res is a FIFO bandwidth/occupancy resource with a timeline name.
type res struct {
	name string
	srv  *des.Server
	tl   *timeline
}

func newRes(sim *des.Sim, tl *timeline, name string, gbps float64) (*res, error) {
	var r des.Rate
	if gbps > 0 {
		var err error
		if r, err = des.GBps(gbps); err != nil {
			return nil, fmt.Errorf("system: %s: %w", name, err)
		}
	}
	return &res{name: name, srv: des.NewServer(sim, name, r), tl: tl}, nil
}

func (r *res) book(d des.Time, bytes int64) des.Time {
	e := r.srv.Reserve(d, bytes)
	r.tl.add(r.name, e-d, e)
	return e
}

func (r *res) transfer(n int64) des.Time { return r.book(r.srv.Rate().Duration(n), n) }

type exec struct {
	// shipped records stored data already sent to the host, by (stored
	// node, first page, pages): host consumers of the same stored node
	// share one flash read and one PCIe transfer per tile (as the
	// compiler's cost model assumes: a value crosses the link once).
	shipped map[[3]int64]*shipment
	plan    *compiler.Plan
	prog    *ir.Program
	a       *arch.Arch
	sys     System
	opt     Options
	sim     *des.Sim
	tl      *timeline

	nodes     []*node
	clcao     bool
	wordBits  int
	keyHalf   int64
	hostKeys  bool // keys fit the host accelerator's on-chip memory
	hotKeys   map[string]bool
	onChipCap int64 // SSD on-chip capacity for resident values

	flash  *flashStream
	link   *pcie.Link
	engine *ssd.Engine
	edp    arch.Datapath
	hdp    arch.Datapath
	cpu    cpuModel
	host   *res
	hbm    *res
	dram   *res
	sram   *res
	edram  *res

	tiles int64
	notes []string
	err   error
}

func (x *exec) fail(err error) {
	if x.err == nil {
		x.err = err
		x.sim.Fail(err)
	}
}

func newExec(plan *compiler.Plan, a *arch.Arch, sys System, opt Options) (*exec, error) {
	x := &exec{plan: plan, prog: plan.Program, a: a, sys: sys, opt: opt, sim: des.New(),
		wordBits: a.Engine.WordBits, edp: a.Engine.Datapath(), hdp: a.Host.Datapath()}
	if opt.Timeline {
		x.tl = newTimeline()
	}
	x.clcao = sys == Rosemary && plan.Opt == "full"
	var err error
	if x.flash, err = newFlashStream(x.sim, a.NAND, x.tl); err != nil {
		return nil, err
	}
	if x.link, err = pcie.New(x.sim, a.Link); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if x.engine, err = ssd.NewEngine(x.sim, a.Engine); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if x.host, err = newRes(x.sim, x.tl, "host", 0); err != nil {
		return nil, err
	}
	if x.hbm, err = newRes(x.sim, x.tl, "hbm", a.Host.HBMGBps); err != nil {
		return nil, err
	}
	if x.dram, err = newRes(x.sim, x.tl, "lpddr", a.DRAM.GBps); err != nil {
		return nil, err
	}
	if x.sram, err = newRes(x.sim, x.tl, "sram", a.SRAM.GBps); err != nil {
		return nil, err
	}
	if a.EDRAM.CapacityBytes > 0 {
		// Keys are interleaved over the banks every 8 KiB and read in
		// chunks far larger than banks x 8 KiB, so the banks are evenly
		// loaded: one server at the banks' summed bandwidth.
		if x.edram, err = newRes(x.sim, x.tl, "edram", float64(a.EDRAM.Banks)*a.EDRAM.BankGBps); err != nil {
			return nil, err
		}
	}
	if err := x.build(); err != nil {
		return nil, err
	}
	return x, nil
}

// build classifies the nodes, places them, profiles them and decides where
// each value lives.
func (x *exec) build() error {
	p := x.prog
	x.nodes = make([]*node, len(p.Nodes))
	prof := compiler.NewProfiler()
	// Tiles per node: MaxTiles, or fewer so that the whole program stays
	// within TileBudget tiles (at least 16 per node).
	computeNodes := int64(0)
	for _, n := range p.Nodes {
		switch n.Op {
		case ir.OpInput, ir.OpStored, ir.OpOutput, ir.OpLevelDown:
		default:
			computeNodes++
		}
	}
	perNode := int64(x.opt.MaxTiles)
	if computeNodes > 0 {
		perNode = min(perNode, max(16, int64(x.opt.TileBudget)/computeNodes))
	}
	var params string
	for i, n := range p.Nodes {
		if n.ID != i {
			return fmt.Errorf("system: node %d has ID %d", i, n.ID)
		}
		if n.Count < 1 {
			return fmt.Errorf("system: node %d has count %d", i, n.Count)
		}
		for _, a := range n.Args {
			if a < 0 || a >= i {
				return fmt.Errorf("system: node %d has argument %d (not topological)", i, a)
			}
		}
		v := &node{ir: n, units: n.Count}
		switch n.Op {
		case ir.OpInput:
			v.kind, v.dev = kindInput, onHost
		case ir.OpStored:
			v.kind, v.dev = kindStored, onSSD
		case ir.OpOutput:
			v.kind, v.dev = kindOutput, onHost
		case ir.OpLevelDown:
			v.kind = kindPass
		case ir.OpBoot:
			return fmt.Errorf("system: node %d: Boot must be expanded by the compiler", i)
		default:
			v.kind = kindCompute
		}
		if v.kind == kindPass || v.kind == kindCompute {
			switch x.sys {
			case CPU, HA:
				v.dev = onHost
			case INSPIRE:
				v.dev = onSSD
			default:
				switch x.plan.Placement[i] {
				case "host":
					v.dev = onHost
				case "ssd":
					v.dev = onSSD
				default:
					return fmt.Errorf("system: node %d placed on %q", i, x.plan.Placement[i])
				}
			}
		}
		if len(n.Args) == 0 && (v.kind == kindCompute || v.kind == kindPass || v.kind == kindOutput) {
			return fmt.Errorf("system: node %d (%s) has no arguments", i, n.Op)
		}
		if v.kind == kindCompute {
			// The same operation/instance mapping as compiler.CostModel.Cost:
			// Sum folds k instances per group with k-1 HAdds.
			first := p.Nodes[n.Args[0]]
			if n.Op == ir.OpSum {
				if first.Count%n.Count != 0 || first.Count < n.Count {
					return fmt.Errorf("system: node %d: Sum of %d instances into %d groups", i, first.Count, n.Count)
				}
				v.k = first.Count / n.Count
			}
			pr, _, err := prof.NodeWork(p, n)
			if err != nil {
				return fmt.Errorf("system: node %d: %w", i, err)
			}
			v.prof = pr
			v.tiles = min(v.units, perNode)
			if minUnits := x.minTileUnits(v, p); minUnits > 1 {
				v.tiles = min(v.tiles, max(1, v.units/minUnits))
			}
		} else if v.kind == kindPass {
			v.tiles = 1
		}
		b, err := p.Bytes(n, x.wordBits)
		if err != nil {
			return fmt.Errorf("system: node %d: %w", i, err)
		}
		v.bytes = b * n.Count
		pr, err := fhe.Lookup(n.Params)
		if err != nil {
			return fmt.Errorf("system: node %d: %w", i, err)
		}
		v.logN = pr.LogN
		x.nodes[i] = v
		params = n.Params
		for _, a := range uniqInts(n.Args) {
			x.nodes[a].users = append(x.nodes[a].users, i)
		}
	}
	if err := x.keys(prof, params); err != nil {
		return err
	}
	x.streaming()
	var over []int
	var largest int64
	for _, v := range x.nodes {
		v.tierOn[onHost] = x.tierOf(v, onHost)
		v.tierOn[onSSD] = x.tierOf(v, onSSD)
		if v.kind != kindStored && v.tierOn[onSSD] == tierDRAM && x.usedOn(v, onSSD) && v.bytes > x.a.DRAM.CapacityBytes {
			over = append(over, v.ir.ID)
			largest = max(largest, v.bytes)
		}
	}
	if len(over) > 0 {
		x.notes = append(x.notes, fmt.Sprintf("%d SSD values (nodes %v, up to %d B) exceed the %d B LPDDR: charged at LPDDR bandwidth, as the compiler's cost model does, capacity not enforced",
			len(over), over, largest, x.a.DRAM.CapacityBytes))
	}
	return nil
}

// minTileUnits is the smallest tile (in units) of a node that reads stored
// data: one flash page per plane of the array, so that every die has a
// multi-plane read queued while the previous tiles are processed (the
// steady state the flash model's per-page time assumes). 8 MiB on the
// rosemary preset: three such tiles in flight fit its 32 MiB SRAM.
func (x *exec) minTileUnits(v *node, p *ir.Program) int64 {
	var pagesPerUnit int64
	for i, a := range v.ir.Args {
		if p.Nodes[a].Op != ir.OpStored || i >= len(v.prof.InputLimbs) {
			continue
		}
		perInst := v.prof.InputLimbs[i] * max(1, (int64(v.prof.N)*int64(x.wordBits)/8+int64(x.a.NAND.PageBytes)-1)/int64(x.a.NAND.PageBytes))
		if v.ir.Op == ir.OpSum {
			perInst *= v.k
		}
		pagesPerUnit += perInst
	}
	if pagesPerUnit == 0 {
		return 1
	}
	planes := int64(x.a.NAND.Planes())
	return (planes + pagesPerUnit - 1) / pagesPerUnit
}

// usedOn reports whether v's value is read or produced on device d.
func (x *exec) usedOn(v *node, d device) bool {
	if v.dev == d && v.kind == kindCompute {
		return true
	}
	for _, u := range v.users {
		if x.nodes[u].dev == d {
			return true
		}
	}
	return false
}

func uniqInts(s []int) []int {
	out := make([]int, 0, len(s))
	for _, v := range s {
		dup := false
		for _, w := range out {
			dup = dup || w == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// keyName names the evaluation key of a node ("" if none), as CLCAO does:
// rlk, conj or the rotation amount modulo the slots.
func keyName(n ir.Node, slots int) string {
	switch n.Op {
	case ir.OpRelinearize:
		return "rlk"
	case ir.OpConjugate:
		return "conj"
	case ir.OpHRot:
		return fmt.Sprintf("rot%d", ((n.Rotation%slots)+slots)%slots)
	}
	return ""
}

// keys decides which evaluation keys are eDRAM-resident (CLCAO's hot set,
// reported by the plan) and whether the host accelerator holds all keys on
// chip (the compiler's rule: keys may take half its on-chip memory).
func (x *exec) keys(prof *compiler.Profiler, params string) error {
	x.hotKeys = map[string]bool{}
	used := map[string]bool{}
	slots := 1
	if params != "" {
		ring, _, err := prof.Ring(params)
		if err == nil {
			slots = 1 << (ring.LogN - 1)
			nQ, nP := len(ring.Q), len(ring.P)
			digits := (nQ - 1 + nP) / nP
			// 2·dnum·(|Q|+|P|) limbs per key, half stored (PRNG halves).
			x.keyHalf = ssd.StoredKSKBytes(int64(2*digits*(nQ+nP)) * (int64(1) << ring.LogN) * int64(x.wordBits) / 8)
		}
	}
	for _, v := range x.nodes {
		if k := keyName(v.ir, slots); k != "" && v.kind == kindCompute {
			used[k] = true
		}
	}
	// The host keeps keys on chip when the compiler decided so.
	x.hostKeys = x.plan.HostKeysOnChip
	x.onChipCap = x.a.SRAM.CapacityBytes
	if !x.clcao || x.a.EDRAM.CapacityBytes == 0 || x.keyHalf == 0 {
		return nil
	}
	// CLCAO's hot set, as the plan records it.
	for _, k := range x.plan.HotKeys {
		if used[k] {
			x.hotKeys[k] = true
		}
	}
	hotBytes := int64(len(x.hotKeys)) * x.keyHalf
	x.onChipCap = x.a.SRAM.CapacityBytes + x.a.EDRAM.CapacityBytes - min(hotBytes, x.a.SRAM.CapacityBytes+x.a.EDRAM.CapacityBytes)
	return nil
}

// streaming marks the values CLCAO streams tile by tile: counted values on
// the SSD whose users are all on the SSD and are Sums (running
// accumulators) or same-count nodes that are themselves streamed (the
// compiler's streamability rule).
//
// INSPIRE streams only its hard-wired dataflow: a product consumed solely
// by Sums goes straight into the running accumulator (the multiply-
// accumulate a PIR engine is built around, inspireStreams); everything
// else follows the no-CLCAO rule.
func (x *exec) streaming() {
	// The host accelerator fuses producer and consumer instances of its own
	// counted values (compiler.Streamable over the host's nodes), as the
	// cost model assumes.
	if x.sys != CPU {
		onHost := func(i int) bool { return x.nodes[i].dev == onHost && x.nodes[i].kind == kindCompute }
		for i := range compiler.Streamable(x.prog, onHost) {
			if onHost(i) {
				x.nodes[i].hostFused = true
			}
		}
	}
	if x.sys == INSPIRE {
		for _, v := range x.nodes {
			v.streamed = inspireStreams(x.nodes, v)
		}
		return
	}
	if !x.clcao {
		return
	}
	for _, i := range x.plan.Streamed {
		if i >= 0 && i < len(x.nodes) && x.nodes[i].dev == onSSD {
			x.nodes[i].streamed = true
		}
	}
}

// tierOf is where v's value lives on device d (for reads there and, on its
// own device, for its writes).
func (x *exec) tierOf(v *node, d device) tier {
	if v.kind == kindStored {
		return tierNAND
	}
	if d == onSSD {
		switch {
		case v.streamed:
			return tierSRAM
		case v.bytes <= x.onChipCap:
			return tierSRAM
		}
		return tierDRAM
	}
	if x.sys == CPU || v.hostFused || v.bytes <= x.a.Host.OnChipBytes {
		return tierFree
	}
	return tierHBM
}

// book moves n bytes through the memory of tier t, starting now.
func (x *exec) book(t tier, n int64) des.Time {
	if n <= 0 {
		return x.sim.Now()
	}
	switch t {
	case tierSRAM:
		return x.sram.transfer(n)
	case tierDRAM:
		return x.dram.transfer(n)
	case tierHBM:
		return x.hbm.transfer(n)
	}
	return x.sim.Now()
}

func (x *exec) limbBytes(v *node) int64 {
	return int64(v.prof.N) * int64(x.wordBits) / 8
}

// unitStart is the first unit of tile j of v.
func unitStart(v *node, j int64) int64 { return v.units * j / v.tiles }

// tileOf is the tile of v holding unit u.
func tileOf(v *node, u int64) int64 {
	t := u * v.tiles / v.units
	for t+1 < v.tiles && unitStart(v, t+1) <= u {
		t++
	}
	for t > 0 && unitStart(v, t) > u {
		t--
	}
	return t
}

// ready reports whether tile j of v has every operand available.
func (x *exec) ready(v *node, j int64) bool {
	for _, ai := range uniqInts(v.ir.Args) {
		a := x.nodes[ai]
		switch {
		case a.kind == kindStored:
		case a.streamed && a.dev == v.dev:
			// Consumer units [u0, u1) need producer units up to the
			// proportional position (exact for Sum groups and same counts).
			u1 := unitStart(v, j+1)
			need := (a.units*u1+v.units-1)/v.units - 1
			if a.done <= tileOf(a, need) {
				return false
			}
		default:
			if !a.arrived[v.dev] {
				return false
			}
		}
	}
	return true
}

// try issues whatever v can start now.
func (x *exec) try(v *node) {
	if v.finished || x.err != nil {
		return
	}
	switch v.kind {
	case kindInput, kindStored:
		return
	case kindOutput, kindPass:
		if x.ready(v, 0) {
			x.finish(v)
		}
		return
	}
	for v.inflight < window && v.issued < v.tiles && x.ready(v, v.issued) {
		j := v.issued
		v.issued++
		v.inflight++
		x.issue(v, j)
	}
}

// issue runs tile j of v: loads, compute, store.
func (x *exec) issue(v *node, j int64) {
	x.tiles++
	u0, u1 := unitStart(v, j), unitStart(v, j+1)
	units := u1 - u0
	inst := units
	if v.ir.Op == ir.OpSum {
		inst = units * (v.k - 1)
	}
	lb := x.limbBytes(v)
	pending := 1
	var compute func()
	join := func() {
		pending--
		if pending == 0 {
			compute()
		}
	}
	direct := x.sim.Now()
	for i, ai := range v.ir.Args {
		if i >= len(v.prof.InputLimbs) {
			break
		}
		a := x.nodes[ai]
		limbs := v.prof.InputLimbs[i]
		var reads, first int64
		switch {
		case v.ir.Op == ir.OpSum:
			reads, first = units*v.k, u0*v.k
		case a.ir.Count < v.ir.Count:
			first = a.ir.Count * u0 / v.ir.Count
			reads = a.ir.Count*u1/v.ir.Count - first
		default:
			reads, first = units, u0
		}
		bytes := reads * limbs * lb
		if reads == 0 || bytes == 0 {
			continue
		}
		if a.kind != kindStored {
			direct = max(direct, x.book(a.tierOn[v.dev], bytes))
			continue
		}
		pages, err := x.storedPages(a, limbs)
		if err != nil {
			x.fail(err)
			return
		}
		if v.dev == onSSD {
			// SSD readers of one stored object share its flash stream tile
			// by tile (as the compiler's cost model assumes).
			key := [3]int64{-1 - int64(a.ir.ID), first * pages, reads * pages}
			if sh, ok := x.shipped[key]; ok {
				pending++
				if sh.done {
					x.sim.At(max(x.sim.Now(), sh.at), join)
				} else {
					sh.waiters = append(sh.waiters, join)
				}
				continue
			}
			sh := &shipment{}
			if x.shipped == nil {
				x.shipped = map[[3]int64]*shipment{}
			}
			x.shipped[key] = sh
			e := x.flash.read(first*pages, reads*pages)
			sh.at = e
			x.sim.At(e, func() {
				sh.done = true
				for _, w := range sh.waiters {
					w()
				}
				sh.waiters = nil
			})
			direct = max(direct, e)
			continue
		}
		if a.ir.Public {
			// A public constant (bootstrapping diagonal, mask): the host
			// makes its own copy, read from host memory.
			if x.sys != CPU {
				direct = max(direct, x.hbm.transfer(bytes))
			}
			continue
		}
		// A host node reading stored data: flash -> PCIe -> host memory
		// (written, then read by the compute: twice the bytes on HBM). A
		// tile another host node already had shipped is read from HBM.
		pending++
		f, n := first*pages, reads*pages
		key := [3]int64{int64(a.ir.ID), f, n}
		if sh, ok := x.shipped[key]; ok {
			after := func() {
				if x.sys != CPU {
					x.sim.At(x.hbm.transfer(bytes), join)
					return
				}
				join()
			}
			if sh.done {
				after()
			} else {
				sh.waiters = append(sh.waiters, after)
			}
			continue
		}
		sh := &shipment{}
		if x.shipped == nil {
			x.shipped = map[[3]int64]*shipment{}
		}
		x.shipped[key] = sh
		hops := []func() des.Time{
			func() des.Time { return x.flash.read(f, n) },
			func() des.Time {
				e, err := x.link.Send(pcie.ToHost, bytes, nil)
				if err != nil {
					x.fail(fmt.Errorf("system: %w", err))
				}
				x.tl.add("pcie", e-x.linkTime(bytes), e)
				return e
			},
		}
		if x.sys != CPU {
			hops = append(hops, func() des.Time { return x.hbm.transfer(2 * bytes) })
		}
		x.chain(hops, func() {
			sh.done = true
			for _, w := range sh.waiters {
				w()
			}
			sh.waiters = nil
			join()
		})
	}
	// Evaluation keys.
	if kb := v.prof.KeyLimbs * lb * inst; kb > 0 {
		switch {
		case v.dev == onSSD && x.hotKeys[keyName(v.ir, x.slots(v))] && x.edram != nil:
			direct = max(direct, x.edram.transfer(ssd.StoredKSKBytes(kb)))
		case v.dev == onSSD:
			direct = max(direct, x.dram.transfer(ssd.StoredKSKBytes(kb)))
		case x.sys == CPU || x.hostKeys:
		default:
			direct = max(direct, x.hbm.transfer(kb))
		}
	}
	compute = func() {
		end, err := x.computeTile(v, inst)
		if err != nil {
			x.fail(err)
			return
		}
		x.sim.At(end, func() {
			out := inst
			if v.ir.Op == ir.OpSum {
				out = units
			}
			e := x.book(v.tierOn[v.dev], v.prof.OutputLimbs*lb*out)
			if e == x.sim.Now() {
				x.complete(v)
				return
			}
			x.sim.At(e, func() { x.complete(v) })
		})
	}
	x.sim.At(direct, join)
}

// shipment is one tile of stored data on its way to the host.
type shipment struct {
	done    bool
	at      des.Time // when the data is there (flash shares)
	waiters []func()
}

// slots is the slot count of v's parameters (for key names).
func (x *exec) slots(v *node) int { return v.prof.N / 2 }

// linkTime is the PCIe busy time of one message (for the timeline).
func (x *exec) linkTime(payload int64) des.Time {
	t, err := pcie.TransferTime(x.a.Link, payload)
	if err != nil {
		return 0
	}
	return t
}

// storedPages is the flash pages of `limbs` limbs of one instance of the
// stored node a under the layout rule.
func (x *exec) storedPages(a *node, limbs int64) (int64, error) {
	s := layout.Shape{Polys: 1, Limbs: int(limbs), LogN: uint8(a.logN), WordSize: uint8(x.wordBits / 8)}
	return x.flash.pagesPerInstance(s)
}

// computeTile books the compute of inst instances of v and returns when it
// ends. On the SSD the kernels run on the engine (ssd.Engine.Run charges
// arch.Datapath.Cycles per kernel, the compiler's cost functions); on the
// host on the host accelerator's datapath, or the CPU calibration.
func (x *exec) computeTile(v *node, inst int64) (des.Time, error) {
	ops := make([]arch.Op, 0, len(v.prof.Kernels))
	for _, k := range arch.Kernels() {
		c := v.prof.Kernels[k]
		if c == 0 || k.IsMemory() {
			continue
		}
		ops = append(ops, arch.Op{Kernel: k, N: v.prof.N, Count: int(c * inst)})
	}
	switch {
	case v.dev == onSSD:
		cy, err := ssd.ChainCycles(x.edp, ops)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		e, err := x.engine.Run(ops, nil)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		x.tl.add("engine", e-des.Time(x.edp.Picoseconds(cy)), e)
		return e, nil
	case x.sys == CPU:
		s, err := x.cpu.seconds(v.prof.Kernels, v.prof.N, inst)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		return x.host.book(des.Time(s*float64(des.Second)+0.5), 0), nil
	default:
		cy, err := ssd.ChainCycles(x.hdp, ops)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		return x.host.book(des.Time(x.hdp.Picoseconds(cy)), 0), nil
	}
}

// chain runs hops one after another (each booked when the previous one
// ends) and calls done after the last.
func (x *exec) chain(hops []func() des.Time, done func()) {
	var step func(i int)
	step = func(i int) {
		if i == len(hops) {
			done()
			return
		}
		e := hops[i]()
		x.sim.At(e, func() { step(i + 1) })
	}
	step(0)
}

// complete retires one tile of v.
func (x *exec) complete(v *node) {
	v.done++
	v.inflight--
	if v.done == v.tiles {
		x.finish(v)
		return
	}
	for _, u := range v.users {
		if w := x.nodes[u]; w.dev == v.dev {
			x.try(w)
		}
	}
	x.try(v)
}

// finish marks v's value complete on its device and ships it to the other
// device if a user runs there (once per destination, like the plan's
// transfers).
func (x *exec) finish(v *node) {
	v.finished = true
	v.arrived[v.dev] = true
	other := onSSD
	if v.dev == onSSD {
		other = onHost
	}
	needOther := false
	for _, u := range v.users {
		w := x.nodes[u]
		if w.dev == other {
			needOther = true
		} else {
			x.try(w)
		}
	}
	if !needOther || v.kind == kindStored {
		return
	}
	dir := pcie.ToDevice
	if other == onHost {
		dir = pcie.ToHost
	}
	bytes := v.bytes
	x.chain([]func() des.Time{
		func() des.Time {
			e, err := x.link.Send(dir, bytes, nil)
			if err != nil {
				x.fail(fmt.Errorf("system: %w", err))
			}
			x.tl.add("pcie", e-x.linkTime(bytes), e)
			return e
		},
		func() des.Time { return x.book(v.tierOn[other], bytes) },
	}, func() {
		v.arrived[other] = true
		for _, u := range v.users {
			if w := x.nodes[u]; w.dev == other {
				x.try(w)
			}
		}
	})
}

func (x *exec) run() error {
	if x.sys == CPU {
		var params string
		for _, n := range x.prog.Nodes {
			if n.Params != "" {
				params = n.Params
			}
		}
		m, err := newCPUModel(params, x.opt.CPUCores)
		if err != nil {
			return err
		}
		x.cpu = m
	}
	for _, v := range x.nodes {
		if v.kind == kindStored {
			v.finished = true
			v.arrived[onSSD] = true
		}
	}
	x.sim.At(0, func() {
		for _, v := range x.nodes {
			if v.kind == kindInput {
				x.finish(v)
			}
		}
		for _, v := range x.nodes {
			x.try(v)
		}
	})
	if err := x.sim.Run(); err != nil {
		return fmt.Errorf("system: simulation: %w", err)
	}
	if x.err != nil {
		return x.err
	}
	for _, v := range x.nodes {
		if !v.finished {
			return fmt.Errorf("system: node %d (%s on %s) never completed (%d of %d tiles)", v.ir.ID, v.ir.Op, v.dev, v.done, v.tiles)
		}
	}
	return nil
}

func (x *exec) result(wall float64) *Result {
	lat := x.sim.Now()
	d := Detail{Latency: lat, HostBusy: x.host.srv.Stats().Busy, EngineBusy: x.engine.Stats().Busy,
		EngineCycles: x.engine.Stats().Cycles, DRAMBusy: x.dram.srv.Stats().Busy, SRAMBusy: x.sram.srv.Stats().Busy,
		HBMBusy: x.hbm.srv.Stats().Busy, NANDBusy: x.flash.busy(), NANDPages: x.flash.pages,
		PCIe: [2]pcie.Stats{x.link.Stats(pcie.ToDevice), x.link.Stats(pcie.ToHost)}}
	if x.edram != nil {
		d.EDRAMBusy = x.edram.srv.Stats().Busy
	}
	u := func(b des.Time) float64 {
		if lat <= 0 {
			return 0
		}
		return float64(b) / float64(lat)
	}
	util := Utilization{Host: u(d.HostBusy), NAND: u(d.NANDBusy), DRAM: u(d.DRAMBusy),
		Engine: u(d.EngineBusy), PCIe: max(u(d.PCIe[0].Busy), u(d.PCIe[1].Busy)), HostMem: u(d.HBMBusy),
		SRAM: u(d.SRAMBusy), EDRAM: u(d.EDRAMBusy)}
	secs := lat.Seconds()
	var energy, area float64
	switch x.sys {
	case Rosemary, INSPIRE:
		for _, c := range x.a.Components {
			switch c.Kind {
			case arch.KindEngine:
				energy += c.PowerW * d.EngineBusy.Seconds()
			case arch.KindSRAM:
				energy += c.PowerW * d.SRAMBusy.Seconds()
			case arch.KindEDRAM:
				energy += c.PowerW * d.EDRAMBusy.Seconds()
			default:
				energy += c.PowerW * secs
			}
		}
		area = x.a.AreaMM2()
		if x.sys == Rosemary {
			energy += x.a.Host.PowerW * d.HostBusy.Seconds()
			area += x.a.Host.AreaMM2
		}
	case HA:
		energy = x.a.Host.PowerW * d.HostBusy.Seconds()
		area = x.a.Host.AreaMM2
		x.notes = append(x.notes, fmt.Sprintf("HA: stored data streams over PCIe at the link's full MQSim rate, %.2f GB/s of payload (%.1f GB/s raw less TLP/DLLP/PHY overheads)",
			x.a.Link.EffectiveGBps(), x.a.Link.RawGBps()))
	case CPU:
		// HostBusy is wall time with all cores working together.
		energy = CPUCorePowerW * float64(x.opt.CPUCores) * d.HostBusy.Seconds()
		x.notes = append(x.notes, fmt.Sprintf("CPU: kernel costs measured single-threaded on this machine (cpu.go), %d core(s) assumed; energy %.1f W per busy core; area not modelled", x.opt.CPUCores, CPUCorePowerW))
	}
	var nandPayload int64
	for _, v := range x.nodes {
		if v.kind == kindStored {
			nandPayload += v.bytes
		}
	}
	if nb := x.flash.pages * int64(x.a.NAND.PageBytes); nandPayload > 0 && float64(nb) > 1.01*float64(nandPayload) {
		x.notes = append(x.notes, fmt.Sprintf("flash pages read carry %.2fx the stored payload: the layout rule gives every limb whole %d B pages",
			float64(nb)/float64(nandPayload), x.a.NAND.PageBytes))
	}
	ev := x.sim.Fired()
	r := Report{System: x.sys.String(), Workload: x.plan.Workload, Arch: x.a.Name, Opt: x.plan.Opt,
		LatencyS: secs, PCIeBytes: d.PCIe[0].PayloadBytes + d.PCIe[1].PayloadBytes,
		NANDBytes: x.flash.pages * int64(x.a.NAND.PageBytes), DRAMBytes: x.dram.srv.Stats().Bytes,
		HostMem: x.hbm.srv.Stats().Bytes, Utilization: util, EnergyJ: energy, AreaMM2: area,
		SimEvents: ev, SimWallS: wall, Tiles: x.tiles, Notes: x.notes}
	if wall > 0 {
		r.EventsPerS = float64(ev) / wall
	}
	sort.Strings(r.Notes)
	return &Result{Report: r, Detail: d, Timeline: x.tl.export()}
}
