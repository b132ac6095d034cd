package ssd

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/compiler/arch"
	"github.com/rosemary-fhe/rosemary/sim/eventsim"
)

// Device is RosemarySSD as the simulator runs it: the FHE engine, the flash
// read stream and the on-board memories, each a FIFO resource on one
// simulator.
type Device struct {
	Arch   *arch.Arch
	Engine *Engine
	Flash  *Flash
	// SRAM, LPDDR (DRAM) and eDRAM (nil when the design has none) are
	// bandwidth servers. The eDRAM's banks are one server at their summed
	// bandwidth: keys are interleaved over the banks every 8 KiB (one row of
	// the 2048-lane AU array x 4 B; the paper gives no granule) and read in
	// chunks far larger than banks x 8 KiB, so the banks are evenly loaded.
	SRAM, DRAM, EDRAM *eventsim.Server
}

// NewDevice builds the device of a on sim.
func NewDevice(sim *eventsim.Sim, a *arch.Arch) (*Device, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("ssd: %w", err)
	}
	d := &Device{Arch: a}
	var err error
	if d.Engine, err = NewEngine(sim, a.Engine); err != nil {
		return nil, err
	}
	if d.Flash, err = NewFlash(sim, a.NAND); err != nil {
		return nil, err
	}
	if d.SRAM, err = memory(sim, "sram", a.SRAM.GBps); err != nil {
		return nil, err
	}
	if d.DRAM, err = memory(sim, "lpddr", a.DRAM.GBps); err != nil {
		return nil, err
	}
	if a.EDRAM.CapacityBytes > 0 {
		if d.EDRAM, err = memory(sim, "edram", float64(a.EDRAM.Banks)*a.EDRAM.BankGBps); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func memory(sim *eventsim.Sim, name string, gbps float64) (*eventsim.Server, error) {
	r, err := eventsim.GBps(gbps)
	if err != nil {
		return nil, fmt.Errorf("ssd: %s: %w", name, err)
	}
	return eventsim.NewServer(sim, name, r), nil
}

// EDRAMBusy is the eDRAM's busy time (0 when the design has none).
func (d *Device) EDRAMBusy() eventsim.Time {
	if d.EDRAM == nil {
		return 0
	}
	return d.EDRAM.Stats().Busy
}

// EnergyJ is the device-side energy of a run lasting `over`: each Table V
// component's power times the active time of what it serves (engine
// components x engine busy time, SRAM x SRAM busy time, scratchpad x eDRAM
// busy time, "other" components x the whole run). Flash and LPDDR power are
// not in Table V and are not charged.
func (d *Device) EnergyJ(over eventsim.Time) float64 {
	e := 0.0
	for _, c := range d.Arch.Components {
		switch c.Kind {
		case arch.KindEngine:
			e += c.PowerW * d.Engine.Stats().Busy.Seconds()
		case arch.KindSRAM:
			e += c.PowerW * d.SRAM.Stats().Busy.Seconds()
		case arch.KindEDRAM:
			e += c.PowerW * d.EDRAMBusy().Seconds()
		default:
			e += c.PowerW * over.Seconds()
		}
	}
	return e
}

// StoredKSKBytes is the stored size of a key-switching key of full bytes:
// each key is pairs (b, a) of polynomials whose a halves are uniformly random
// and regenerated from a PRNG seed on chip, so only half is stored (rounded
// up) — the paper's "store only half of each KSK".
func StoredKSKBytes(full int64) int64 {
	if full <= 0 {
		return 0
	}
	return (full + 1) / 2
}
