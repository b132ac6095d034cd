package system

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
)

// shipment is one tile of stored data read once for all its readers of one
// kind: a flash read shared by the SSD nodes reading the tile, or a flash ->
// PCIe -> host memory transfer shared by the host nodes reading it (as the
// compiler's cost model assumes: a value crosses the link once).
type shipment struct {
	done    bool
	waiters []func()
}

// shared returns the shipment of key, new (for the caller to start) when no
// reader has asked for it yet. Keys are (stored node, first page, pages),
// the node as -1-ID for SSD readers and ID for host readers.
func (x *exec) shared(key [3]int64) (sh *shipment, isNew bool) {
	if sh, ok := x.shipped[key]; ok {
		return sh, false
	}
	if x.shipped == nil {
		x.shipped = map[[3]int64]*shipment{}
	}
	sh = &shipment{}
	x.shipped[key] = sh
	return sh, true
}

// then calls f once the shipment is there: now if it already is.
func (sh *shipment) then(f func()) {
	if sh.done {
		f()
		return
	}
	sh.waiters = append(sh.waiters, f)
}

// arrive marks the shipment there and wakes its waiters.
func (sh *shipment) arrive() {
	sh.done = true
	for _, w := range sh.waiters {
		w()
	}
	sh.waiters = nil
}

// readStored books the read of instances [first, first+reads) (limbs limbs
// of each, bytes in all) of the stored node a by v, a node on either
// device. It returns when the read ends if that is known now, else now
// after registering with await the wake-up the tile must wait for.
func (x *exec) readStored(v, a *node, limbs, first, reads, bytes int64, await func() func()) (eventsim.Time, error) {
	now := x.sim.Now()
	pages, err := x.storedPages(a, limbs)
	if err != nil {
		return now, err
	}
	f, n := first*pages, reads*pages
	if v.dev == onSSD {
		// SSD readers of one stored object share its flash stream tile
		// by tile.
		sh, isNew := x.shared([3]int64{-1 - int64(a.ir.ID), f, n})
		if !isNew {
			sh.then(await())
			return now, nil
		}
		e := x.dev.Flash.Read(f, n)
		x.sim.At(e, sh.arrive)
		return e, nil
	}
	if a.ir.Public {
		// A public constant (bootstrapping diagonal, mask): the host makes
		// its own copy, read from host memory.
		if x.sys != CPU {
			return x.hbm.transfer(bytes), nil
		}
		return now, nil
	}
	// A host node reading stored data: flash -> PCIe -> host memory
	// (written, then read by the compute: twice the bytes on HBM). A tile
	// another host node already had shipped is only read from HBM. The CPU
	// baseline's memory is not modelled.
	join := await()
	hostMem := func(n int64, then func()) {
		if x.sys == CPU {
			then()
			return
		}
		x.sim.At(x.hbm.transfer(n), then)
	}
	sh, isNew := x.shared([3]int64{int64(a.ir.ID), f, n})
	if !isNew {
		sh.then(func() { hostMem(bytes, join) })
		return now, nil
	}
	x.chain([]func() eventsim.Time{
		func() eventsim.Time { return x.dev.Flash.Read(f, n) },
		func() eventsim.Time {
			e, err := x.link.Send(pcie.ToHost, bytes, nil)
			if err != nil {
				x.fail(fmt.Errorf("system: %w", err))
			}
			x.tl.add("pcie", e-x.linkTime(bytes), e)
			return e
		},
	}, func() {
		hostMem(2*bytes, func() {
			sh.arrive()
			join()
		})
	})
	return now, nil
}

// storedPages is the flash pages of `limbs` limbs of one instance of the
// stored node a under the layout rule.
func (x *exec) storedPages(a *node, limbs int64) (int64, error) {
	s := layout.Shape{Polys: 1, Limbs: int(limbs), LogN: uint8(a.logN), WordSize: uint8(x.wordBits / 8)}
	if a.ir.LWELimbs > 0 {
		s.WordSize = 4 // an LWE value's words are 32 bits on any datapath
	}
	return x.dev.Flash.PagesPerInstance(s)
}
