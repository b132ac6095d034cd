// Package system composes the hardware models — the SSD (sim/ssd.Device:
// engine, flash, memories), the link (sim/pcie) and the host (its
// accelerator's datapath and HBM, or the CPU calibration) — into the four
// systems the Rosemary paper compares and runs a compiler.Plan on one of
// them:
//
//   - Rosemary: the plan's placement. SSD nodes run on the in-storage engine
//     (ssd.Engine: arch.Datapath.Cycles per kernel, the compiler's cost
//     functions); stored operands stream from flash, every channel in
//     parallel; intermediates that CLCAO streams or that fit on chip move
//     at SRAM bandwidth, the others through LPDDR; evaluation keys come
//     from the eDRAM (CLCAO's hot set) or LPDDR, half of each key stored.
//     Host nodes run on the host accelerator (its datapath, HBM). Values
//     crossing the cut go over PCIe (sim/pcie, MQSim's TLP formula), once
//     per destination.
//   - HA: every node on the host accelerator; stored data streams flash ->
//     PCIe -> HBM at the link's full (MQSim) bandwidth.
//   - CPU: every node on the CPU with kernel costs measured on this machine
//     (cpu.go); stored data streams over PCIe.
//   - INSPIRE: an ISP-only engine, by assumption (inspire.go).
//
// Per-kernel work comes from lower.Profiler.Of (the real lowering), with
// the compiler's operation/instance mapping (a Sum of k instances per group
// is k-1 HAdds per group).
//
// Time and granularity. A node's Count instances are processed in tiles of
// consecutive instances (at most Options.MaxTiles per node, fewer when the
// program has so many nodes that it would exceed Options.TileBudget; a node reading
// stored data uses tiles of at least one flash page per plane). Each tile
// is loaded (all its operand and key reads booked at once on their
// resources), computed, then stored: three events. Every resource is a FIFO
// server (eventsim.Server), so the flash channels, LPDDR, SRAM, eDRAM, engine,
// host and link work concurrently on different tiles: a node keeps up to
// three tiles in flight (triple buffering), and a consumer of a value CLCAO
// streams starts a tile as soon as the producer tiles covering it are done
// (pipelining across nodes); other consumers wait for the whole value.
// The tile size sets only the pipeline fill and drain (at most a few tiles'
// time per node), never the steady-state throughput, which is the
// bottleneck resource's. The simulator never works per coefficient or per
// flash page: flash reads are booked per tile on each channel at the
// steady-state per-page time of nand.PeakReadGBps (plus command and tR
// fill after an idle period: ssd.Flash), which the page-level nand.Array
// reproduces within 1% on long scans (ssd's TestFlashMatchesPageLevel).
//
// Flash layout. Pages are located by store/layout's channel-interleaving
// rule (page n of an object on channel n mod C, every limb in whole pages);
// a counted Stored node is one striped object whose instances follow each
// other. Limbs smaller than a page (N = 2^12 at 32-bit words on 32 KiB
// pages) therefore read whole pages; the report notes it.
//
// Outputs (Report): latency, bytes over PCIe / flash / LPDDR / HBM, busy
// fractions, energy = Table V component power x the active time of what it
// serves (engine units x engine busy, SRAM x SRAM busy, scratchpad x eDRAM
// busy, other rows x the whole run) + host accelerator power x its busy
// time (Rosemary, HA) or CPUCorePowerW x CPU busy time (CPU); area of the
// parts the system has (device Table V rows and/or the host accelerator).
// Flash, LPDDR and HBM power are not in Table V and are not charged.
// Options.Timeline records per-resource busy intervals, written by
// Timeline.WriteCSV.
//
// Policies (placement.go) come from the compiler, not copies of it: the
// plan's CLCAO decisions (HotKeys, Streamed, HostKeysOnChip) and the
// compiler's exported rules — key names (compiler.KeyName), the stored key
// size (compiler.StoredKeyBytes), the on-chip capacity for values under
// CLCAO (compiler.ResidentCapacity: SRAM plus eDRAM less the hot keys; SRAM
// alone without CLCAO) and the host's fusing of counted values
// (compiler.Streamable). Values larger than LPDDR are charged at LPDDR
// bandwidth without enforcing its capacity, as the cost model does; the
// report notes it.
package system
