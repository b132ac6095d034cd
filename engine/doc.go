// Package engine holds Rosemary's functional executors: everything that
// computes real ciphertexts, and none of the planning: package compiler
// decides what runs where, engine runs it. It imports code generation
// (package lower) but not the planner.
//
//   - Machine interprets mPrograms over limb memory — SRAM and eDRAM slots
//     plus DRAM/NAND objects behind an ObjectMemory — using the rns kernels,
//     and counts what a hardware model needs: instructions by opcode,
//     micro-operations (limb kernels) and bytes moved per memory space. It
//     models no time.
//   - Executor runs an IR program node by node: host nodes with Lattigo's
//     evaluator, device nodes as lowered mPrograms through a DeviceRunner
//     (LocalDevice runs the interpreter in process; package device provides
//     a remote one). With a ResidentDevice, values stay where they are
//     computed and only values crossing a host↔device cut move; ExecStats
//     counts the bytes that do. RunSegments runs a plan's segments in
//     order instead (the caller turns a compiler.Plan into Segments), each
//     device segment as one stream program through a SegmentRunner.
//   - Stream runs a lower.StreamProgram, the form a device executes a
//     segment in: stored instances come through a StoredReader (in order,
//     with read-ahead), bodies run on worker-owned interpreters, and a
//     memory limit bounds what a run holds (ErrStreamMemory).
//   - ProgramMeta, PolyLimbs, KeyLimbs and GaloisElements translate between
//     Lattigo's values and the limb layout package lower lowers to.
package engine
