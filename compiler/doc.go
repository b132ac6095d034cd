// Package compiler turns FHE programs into plans and mPrograms for the
// Rosemary engines. It holds two things:
//
// Code generation. LowerOp lowers one homomorphic operation to
// micro-operations; key switching is the hybrid scheme (Decompose → INTT →
// BConv → NTT → MODMAC with the evaluation key → ModDown) over dnum digits,
// written to compute exactly what Lattigo v6's evaluator computes so that
// the interpreter's outputs are bit-identical. A compact stored BGV
// plaintext is lifted inside its PMult (OpPMultCompact: one limb read,
// copied to every modulus, NTT); LowerMACCompact folds a sum of such
// products. ProfileProgram counts what a lowered operation does.
//
// Planning. Compile runs the passes of one table (passes in compile.go):
// validate, expand bootstrapping, CLCAO's rotation decomposition, schedule
// and residency hints, the cost model, the partition (Bare: the workload's
// segment hints; otherwise TDAP's min-cut), segmentation, CLCAO's placement
// and the estimate. The result is a Plan: placement, segments, transfers,
// the estimated latency and mProgram sizes, and CLCAO's decisions (hot keys,
// streamed values) for the simulator to follow. A device segment becomes
// code on demand: Plan.SegmentProgram materialises it as one static
// mProgram, Plan.StreamSegment as the stream program a device runs over its
// stored data.
package compiler
