// Package ssd models RosemarySSD on the sim/eventsim core as the system
// simulator (sim/system) runs it: Device composes, from an arch.Arch, the
// FHE engine (the 2D AU array), the flash read model and the on-board
// memories. The page-level flash back end (MQSim's ONFI model, one event per
// page) is the sub-package nand; it calibrates the bulk model here.
//
// The FHE engine charges each kernel the cycles of arch.Datapath.Cycles (the
// same cost functions the compiler's cost model uses). Vector chaining
// assumption: the AU array is one reconfigurable datapath, so kernels run one
// after another on it and never overlap each other; chaining forwards each
// kernel's output lanes directly into the next kernel, so a chain of kernels
// costs the sum of their throughput cycles, with no pipeline refill between
// them and no SRAM round trip for the chained intermediates (only the chain's
// first inputs and last outputs touch SRAM/eDRAM). Engine time is therefore
// the per-kernel throughput cycles / clock; pipeline fill of the first kernel
// of a chain is not modelled (tens of cycles against hundreds per limb at
// N >= 2^12).
//
// Flash: Flash books whole runs of pages per channel at the steady-state
// per-page time of nand.PeakReadGBps, plus the command and tR fill after an
// idle period; pages are located by store/layout's stripe rule. It agrees
// with the page-level nand.Array within 1% on long scans
// (TestFlashMatchesPageLevel).
//
// Memories: SRAM, LPDDR and the eDRAM scratchpad are FIFO bandwidth servers
// (the eDRAM's banks as one server at their summed bandwidth, see Device).
// Where a value lives is not decided here: the compiler's plan (CLCAO's hot
// keys and streamed values, compiler.ResidentCapacity) and sim/system's
// placement rules choose the memory a transfer is booked on. Evaluation keys
// are stored half size (StoredKSKBytes: the other half is regenerated on
// chip by the PRNG). The device never writes flash during execution.
//
// Time is picoseconds (eventsim.Time).
package ssd
