// Package engine holds Rosemary's functional executors. Machine interprets
// mPrograms over limb memory — SRAM and eDRAM slots plus DRAM/NAND objects
// behind an ObjectMemory — using the rns kernels, and counts what a
// hardware model needs: instructions by opcode, micro-operations (limb
// kernels) and bytes moved per memory space. It models no time.
package engine
