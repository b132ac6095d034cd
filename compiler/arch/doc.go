// Package arch holds the hardware descriptions of the Rosemary system and the
// analytic per-kernel cost functions shared by the compiler's cost model and
// the simulator (one source of truth).
//
// An Arch describes the host FHE accelerator (UFC/SHARP class), the in-storage
// FHE engine (a 2D array of adaptive units), the SSD memories (SRAM buffer,
// eDRAM scratchpad, LPDDR), the NAND back end and the host link (PCIe), plus
// the per-component area and power of Table V of the Rosemary paper. Presets
// are JSON files embedded in the binary (presets/*.json); every parameter
// carries the source it comes from (a paper table, a cited configuration, a
// tool default or a first-principles derivation) in a "source" field beside
// it. No parameter is fitted to reproduce a reported result.
//
// The CPU baseline's calibration (baselines/cpu.json, loaded by CPU) is a
// measurement rather than a hardware description: per-limb kernel times of
// the rns package on one core, with the machine, date and method they come
// from.
//
// The cost functions (Datapath.Cycles, Datapath.BytesPerLimb) are analytic:
// they turn one kernel over one RNS limb of ring degree N into datapath
// cycles and bytes. They do not model queues or time; the simulator (sim/...)
// composes them with its resource models.
//
// Units: capacities and sizes are bytes, bandwidths are GB/s (10^9 bytes per
// second), frequencies MHz, NAND timings nanoseconds, area mm², power W.
package arch
