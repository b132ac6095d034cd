// Package lower is Rosemary's code generation: it turns homomorphic
// operations into mPrograms (package isa) and defines the stream program a
// device runs a segment as. It decides nothing about where anything runs
// (that is package compiler, the planner); the executors (engine, device)
// need only this package.
//
//   - Op lowers one operation to micro-operations with its calling
//     convention (Program: the mProgram, its input, key and output
//     objects). Key switching is the hybrid scheme (Decompose → INTT →
//     BConv → NTT → MODMAC with the evaluation key → ModDown) over dnum
//     digits, written to compute exactly what Lattigo v6's evaluator
//     computes, so that the interpreter's outputs are bit-identical. A
//     compact stored BGV plaintext is lifted inside its PMult
//     (OpPMultCompact: one limb read, copied to every modulus, NTT);
//     MACCompact folds a sum of such products as a multiply-accumulate loop.
//   - The bootstrapping's operations: named constants (BootConst,
//     ConstantOp), mixed-degree additions (AddMixed) and the hoisted BSGS
//     product of a DFT matrix (LinearTransform), with the names
//     compiler.ExpandBoot writes into the nodes that use them.
//   - StreamProgram is a device segment as a device runs it: one body per
//     node and the IR's instance rules, validated and encoded here, built
//     by compiler.Plan.StreamSegment.
//   - ProfileOf counts what a lowered operation does; Profiler lowers the
//     operations of a preset once and caches their profiles for the cost
//     model and the simulator.
package lower
