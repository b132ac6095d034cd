// Package compiler turns FHE programs into mPrograms for the Rosemary
// engines. This file set holds the lowering of single homomorphic
// operations to micro-operations; key switching is the hybrid scheme
// (Decompose → INTT → BConv → NTT → MODMAC with the evaluation key →
// ModDown) over dnum digits, written to compute exactly what Lattigo v6's
// evaluator computes so that the interpreter's outputs are bit-identical.
// A compact stored BGV plaintext is lifted inside its PMult
// (OpPMultCompact: one limb read, copied to every modulus, NTT).
//
// Compile runs the passes of one table (passes in compile.go): validate,
// expand bootstrapping, CLCAO's rotation decomposition, schedule and
// residency hints, the cost model, the partition (Bare: the workload's
// segment hints; otherwise TDAP's min-cut), segmentation, CLCAO's placement
// and the estimate. The result is a Plan: placement, segments, transfers and
// the per-segment mPrograms.
package compiler
