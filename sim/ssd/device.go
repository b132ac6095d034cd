package ssd

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/arch"
	"github.com/rosemary-fhe/rosemary/sim/des"
	"github.com/rosemary-fhe/rosemary/sim/ssd/nand"
)

// Device is RosemarySSD: flash, memories and FHE engine on one simulator.
type Device struct {
	Sim    *des.Sim
	Arch   *arch.Arch
	NAND   *nand.Array
	Mem    *Hierarchy
	Engine *Engine
}

// NewDevice builds the device of a on sim; layout locates NAND pages (nil
// for nand.RoundRobin).
func NewDevice(sim *des.Sim, a *arch.Arch, layout nand.Layout) (*Device, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("ssd: %w", err)
	}
	fl, err := nand.New(sim, a.NAND, layout)
	if err != nil {
		return nil, fmt.Errorf("ssd: %w", err)
	}
	mem, err := NewHierarchy(sim, a)
	if err != nil {
		return nil, err
	}
	eng, err := NewEngine(sim, a.Engine)
	if err != nil {
		return nil, err
	}
	return &Device{Sim: sim, Arch: a, NAND: fl, Mem: mem, Engine: eng}, nil
}

// Utilization is the busy fraction of each device resource over a window.
type Utilization struct {
	NAND   float64 `json:"nand"` // mean over channels
	DRAM   float64 `json:"dram"`
	EDRAM  float64 `json:"edram"` // mean over banks
	SRAM   float64 `json:"sram"`
	Engine float64 `json:"engine"`
}

// Utilization reports each resource's busy fraction over [0, over].
func (d *Device) Utilization(over des.Time) Utilization {
	u := Utilization{
		NAND:   d.NAND.Stats().ChannelBusy.Seconds() / over.Seconds() / float64(d.Arch.NAND.Channels),
		DRAM:   d.Mem.DRAM.Utilization(over),
		SRAM:   d.Mem.SRAM.Utilization(over),
		Engine: d.Engine.Utilization(over),
	}
	if over <= 0 {
		u.NAND = 0
	}
	if d.Mem.EDRAM != nil {
		u.EDRAM = d.Mem.EDRAM.Utilization(over)
	}
	return u
}

// EnergyJ is the device-side energy of a run lasting `over`: each Table V
// component's power times the active time of what it serves (engine
// components x engine busy time, SRAM x SRAM busy time, scratchpad x mean
// eDRAM bank busy time, "other" components x the whole run).
func (d *Device) EnergyJ(over des.Time) float64 {
	u := d.Utilization(over)
	s := over.Seconds()
	e := 0.0
	for _, c := range d.Arch.Components {
		switch c.Kind {
		case arch.KindEngine:
			e += c.PowerW * u.Engine * s
		case arch.KindSRAM:
			e += c.PowerW * u.SRAM * s
		case arch.KindEDRAM:
			e += c.PowerW * u.EDRAM * s
		default:
			e += c.PowerW * s
		}
	}
	return e
}

// Fetch moves n bytes from tier `from` at address addr (a byte address; for
// NAND, addr/page size is the first logical page) into tier `into` (which
// may equal from for a plain read) and calls done when the last byte has
// been written. Flash pages are written into `into` as each one arrives, so
// the flash and the destination memory overlap. Fetching into NAND is an
// error: Rosemary never writes flash during execution.
func (d *Device) Fetch(from, into Tier, addr, n int64, done func()) error {
	if addr < 0 || n < 0 {
		return fmt.Errorf("ssd: fetch of %d bytes at %d", n, addr)
	}
	if into == TierNAND {
		return fmt.Errorf("ssd: fetch into NAND: the device does not write flash during execution")
	}
	dst := d.Mem.Memory(into)
	if dst == nil {
		return fmt.Errorf("ssd: fetch into %v: the design has none", into)
	}
	if from != TierNAND {
		src := d.Mem.Memory(from)
		if src == nil {
			return fmt.Errorf("ssd: fetch from %v: the design has none", from)
		}
		if src == dst {
			src.Access(addr, n, done)
			return nil
		}
		// Source read then destination write, streamed: the transfer ends
		// when the slower of the two has moved every byte.
		end := src.Access(addr, n, nil)
		if e := dst.Access(addr, n, nil); e > end {
			end = e
		}
		if done != nil {
			d.Sim.At(end, done)
		}
		return nil
	}
	page := int64(d.Arch.NAND.PageBytes)
	if n == 0 {
		if done != nil {
			d.Sim.After(0, done)
		}
		return nil
	}
	first, last := addr/page, (addr+n-1)/page
	left := last - first + 1
	for p := first; p <= last; p++ {
		if err := d.NAND.Read(p, func(p int64) {
			dst.Access(p*page, page, func() {
				left--
				if left == 0 && done != nil {
					done()
				}
			})
		}); err != nil {
			return err
		}
	}
	return nil
}
