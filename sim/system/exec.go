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

// exec is one run of a plan on a system: its state, its setup (the SSD
// device, the link and the host's resources, then the nodes: nodes.go,
// placement.go) and the event loop that drives the tiles (tiles.go) to
// completion.
type exec struct {
	// shipped records the tiles of stored data already read (shipment.go).
	shipped map[[3]int64]*shipment
	plan    *compiler.Plan
	prog    *ir.Program
	a       *arch.Arch
	sys     System
	opt     Options
	sim     *eventsim.Sim
	tl      *timeline

	nodes     []*node
	clcao     bool
	wordBits  int
	keyHalf   int64
	hostKeys  bool // the host accelerator holds every key on chip (the plan says)
	hotKeys   map[string]bool
	onChipCap int64 // SSD on-chip capacity for resident values

	// dev is the SSD (engine, flash, memories); sram, dram and edram book
	// its memories with timeline names, edram nil when it has none.
	dev   *ssd.Device
	link  *pcie.Link
	edp   arch.Datapath
	hdp   arch.Datapath
	cpu   cpuModel
	host  *res
	hbm   *res
	dram  *res
	sram  *res
	edram *res

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
	x := &exec{plan: plan, prog: plan.Program, a: a, sys: sys, opt: opt, sim: eventsim.New(),
		wordBits: a.Engine.WordBits, edp: a.Engine.Datapath(), hdp: a.Host.Datapath()}
	if opt.Timeline {
		x.tl = newTimeline()
	}
	x.clcao = sys == Rosemary && plan.Opt == compiler.OptFull
	var err error
	if x.dev, err = ssd.NewDevice(x.sim, a); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	x.dev.Flash.OnBusy = func(s, e eventsim.Time) { x.tl.add("nand", s, e) }
	x.sram = &res{name: "sram", srv: x.dev.SRAM, tl: x.tl}
	x.dram = &res{name: "lpddr", srv: x.dev.DRAM, tl: x.tl}
	if x.dev.EDRAM != nil {
		x.edram = &res{name: "edram", srv: x.dev.EDRAM, tl: x.tl}
	}
	if x.link, err = pcie.New(x.sim, a.Link); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if x.host, err = newRes(x.sim, x.tl, "host", 0); err != nil {
		return nil, err
	}
	if x.hbm, err = newRes(x.sim, x.tl, "hbm", a.Host.HBMGBps); err != nil {
		return nil, err
	}
	if err := x.build(); err != nil {
		return nil, err
	}
	return x, nil
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
