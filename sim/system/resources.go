package system

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
)

// res is a FIFO bandwidth/occupancy resource with a timeline name.
type res struct {
	name string
	srv  *eventsim.Server
	tl   *timeline
}

func newRes(sim *eventsim.Sim, tl *timeline, name string, gbps float64) (*res, error) {
	var r eventsim.Rate
	if gbps > 0 {
		var err error
		if r, err = eventsim.GBps(gbps); err != nil {
			return nil, fmt.Errorf("system: %s: %w", name, err)
		}
	}
	return &res{name: name, srv: eventsim.NewServer(sim, name, r), tl: tl}, nil
}

func (r *res) book(d eventsim.Time, bytes int64) eventsim.Time {
	e := r.srv.Reserve(d, bytes)
	r.tl.add(r.name, e-d, e)
	return e
}

func (r *res) transfer(n int64) eventsim.Time { return r.book(r.srv.Rate().Duration(n), n) }

// book moves n bytes through the memory of tier t, starting now.
func (x *exec) book(t tier, n int64) eventsim.Time {
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

// linkTime is the PCIe busy time of one message (for the timeline).
func (x *exec) linkTime(payload int64) eventsim.Time {
	t, err := pcie.TransferTime(x.a.Link, payload)
	if err != nil {
		return 0
	}
	return t
}

// chain runs hops one after another (each booked when the previous one
// ends) and calls done after the last.
func (x *exec) chain(hops []func() eventsim.Time, done func()) {
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
