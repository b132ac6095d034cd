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
