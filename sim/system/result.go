package system

import (
	"fmt"
	"sort"

	"github.com/rosemary-fhe/rosemary/sim/eventsim"
	"github.com/rosemary-fhe/rosemary/sim/pcie"
)

// result reports the finished run: raw counters (Detail), the Report's
// bytes, busy fractions, energy and area of the system's parts, and notes on
// what the model assumed; wall is the simulator's own run time.
func (x *exec) result(wall float64) *Result {
	lat := x.sim.Now()
	eng := x.dev.Engine.Stats()
	d := Detail{Latency: lat, HostBusy: x.host.srv.Stats().Busy, EngineBusy: eng.Busy,
		EngineCycles: eng.Cycles, DRAMBusy: x.dev.DRAM.Stats().Busy, SRAMBusy: x.dev.SRAM.Stats().Busy,
		EDRAMBusy: x.dev.EDRAMBusy(), HBMBusy: x.hbm.srv.Stats().Busy, NANDBusy: x.dev.Flash.Busy(),
		NANDPages: x.dev.Flash.Pages(), PCIe: [2]pcie.Stats{x.link.Stats(pcie.ToDevice), x.link.Stats(pcie.ToHost)}}
	u := func(b eventsim.Time) float64 {
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
		energy = x.dev.EnergyJ(lat)
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
	if nb := x.dev.Flash.Pages() * int64(x.a.NAND.PageBytes); nandPayload > 0 && float64(nb) > 1.01*float64(nandPayload) {
		x.notes = append(x.notes, fmt.Sprintf("flash pages read carry %.2fx the stored payload: the layout rule gives every limb whole %d B pages",
			float64(nb)/float64(nandPayload), x.a.NAND.PageBytes))
	}
	ev := x.sim.Fired()
	r := Report{System: x.sys.String(), Workload: x.plan.Workload, Arch: x.a.Name, Opt: x.plan.Opt,
		LatencyS: secs, PCIeBytes: d.PCIe[0].PayloadBytes + d.PCIe[1].PayloadBytes,
		NANDBytes: x.dev.Flash.Pages() * int64(x.a.NAND.PageBytes), DRAMBytes: x.dev.DRAM.Stats().Bytes,
		HostMem: x.hbm.srv.Stats().Bytes, Utilization: util, EnergyJ: energy, AreaMM2: area,
		SimEvents: ev, SimWallS: wall, Tiles: x.tiles, Notes: x.notes}
	if wall > 0 {
		r.EventsPerS = float64(ev) / wall
	}
	sort.Strings(r.Notes)
	return &Result{Report: r, Detail: d, Timeline: x.tl.export()}
}
