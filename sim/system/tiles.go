package system

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/compiler/ir"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
	"github.com/rosemary-fhe/rosemary/sim/ssd"
)

// The tile event engine: a node's instances run in tiles, each loaded
// (operands, keys), computed and stored; a tile starts when its operands
// are there and fewer than window tiles of its node are in flight.

// window is the tiles of one node in flight at once (loaded, computing or
// storing): triple buffering, so the next tile's loads overlap the current
// tile's compute and the previous tile's store.
const window = 3

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
	// await registers one more thing the tile waits for besides the bookings
	// that end by direct.
	await := func() func() {
		pending++
		return join
	}
	direct := x.sim.Now()
	for i, ai := range v.ir.Args {
		if i >= len(v.prof.InputLimbs) {
			break
		}
		a := x.nodes[ai]
		limbs := v.prof.InputLimbs[i]
		first, reads := operandRange(v, a, u0, u1)
		bytes := reads * limbs * lb
		if reads == 0 || bytes == 0 {
			continue
		}
		if a.kind != kindStored {
			direct = max(direct, x.book(a.tierOn[v.dev], bytes))
			continue
		}
		e, err := x.readStored(v, a, limbs, first, reads, bytes, await)
		if err != nil {
			x.fail(err)
			return
		}
		direct = max(direct, e)
	}
	direct = max(direct, x.readKeys(v, v.prof.KeyLimbs*lb*inst))
	compute = func() {
		end, err := x.computeTile(v, inst)
		if err != nil {
			x.fail(err)
			return
		}
		x.sim.At(end, func() {
			out := inst
			switch {
			case v.ir.Op == ir.OpSum:
				out = units
			case v.ir.Op == ir.OpLWEScan:
				// The accumulator stays on chip until the last block.
				out = 0
				if u1 == v.units {
					out = 1
				}
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

// operandRange is the instances [first, first+reads) of operand a that the
// units [u0, u1) of v read: k per group for a Sum, the proportional share of
// a smaller operand (broadcast), else the same units.
func operandRange(v, a *node, u0, u1 int64) (first, reads int64) {
	switch {
	case v.ir.Op == ir.OpSum:
		return u0 * v.k, (u1 - u0) * v.k
	case v.ir.Window && a.kind == kindStored:
		return v.ir.StoredOffset + u0, u1 - u0
	case a.ir.Count < v.ir.Count:
		first = a.ir.Count * u0 / v.ir.Count
		return first, a.ir.Count*u1/v.ir.Count - first
	}
	return u0, u1 - u0
}

// readKeys books the read of kb bytes of evaluation keys for a tile of v
// and returns when it ends: on the SSD from the eDRAM (a CLCAO hot key) or
// LPDDR, half of each key stored; on the host from HBM unless the keys are
// on chip (or the CPU, whose memory is not modelled).
func (x *exec) readKeys(v *node, kb int64) eventsim.Time {
	now := x.sim.Now()
	if kb <= 0 {
		return now
	}
	switch {
	case v.dev == onSSD && x.hotKeys[compiler.KeyName(v.ir, x.slots(v))] && x.edram != nil:
		return x.edram.transfer(ssd.StoredKSKBytes(kb))
	case v.dev == onSSD:
		return x.dram.transfer(ssd.StoredKSKBytes(kb))
	case x.sys == CPU || x.hostKeys:
		return now
	}
	return x.hbm.transfer(kb)
}

// computeTile books the compute of inst instances of v and returns when it
// ends. On the SSD the kernels run on the engine (ssd.Engine.Run charges
// arch.Datapath.Cycles per kernel, the compiler's cost functions); on the
// host on the host accelerator's datapath, or the CPU calibration.
func (x *exec) computeTile(v *node, inst int64) (eventsim.Time, error) {
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
		e, err := x.dev.Engine.Run(ops, nil)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		x.tl.add("engine", e-eventsim.Time(x.edp.Picoseconds(cy)), e)
		return e, nil
	case x.sys == CPU:
		s, err := x.cpu.seconds(v.prof.Kernels, v.prof.N, inst)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		return x.host.book(eventsim.Time(s*float64(eventsim.Second)+0.5), 0), nil
	default:
		cy, err := ssd.ChainCycles(x.hdp, ops)
		if err != nil {
			return 0, fmt.Errorf("system: node %d: %w", v.ir.ID, err)
		}
		return x.host.book(eventsim.Time(x.hdp.Picoseconds(cy)), 0), nil
	}
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
	x.chain([]func() eventsim.Time{
		func() eventsim.Time {
			e, err := x.link.Send(dir, bytes, nil)
			if err != nil {
				x.fail(fmt.Errorf("system: %w", err))
			}
			x.tl.add("pcie", e-x.linkTime(bytes), e)
			return e
		},
		func() eventsim.Time { return x.book(v.tierOn[other], bytes) },
	}, func() {
		v.arrived[other] = true
		for _, u := range v.users {
			if w := x.nodes[u]; w.dev == other {
				x.try(w)
			}
		}
	})
}
