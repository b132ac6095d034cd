// Package ssd models RosemarySSD on the sim/des core: the flash back end
// (sub-package nand), the memories (SRAM buffer, 8-bank eDRAM scratchpad,
// LPDDR) with the paper's spill/fetch order, and the FHE engine (the 2D AU
// array), composed by Device from an arch.Arch.
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
// Memories: SRAM and LPDDR are FIFO bandwidth servers, the eDRAM a banked
// memory (des.Banked) interleaved every 8 KiB (one row of the 2048-lane AU
// array x 4 B, first principles). Capacities are enforced by explicit
// allocation. Intermediates spill SRAM -> eDRAM -> LPDDR; evaluation keys are
// kept in eDRAM, else LPDDR, else read from NAND; only half of each
// key-switching key is stored, the other (uniformly random) half being
// regenerated on chip by the PRNG (StoredKSKBytes). Device.Fetch moves data
// down the hierarchy (NAND -> LPDDR/eDRAM/SRAM, LPDDR -> eDRAM, ...),
// streaming flash pages into the destination as they arrive; it never
// writes flash.
//
// Time is picoseconds (des.Time).
package ssd
