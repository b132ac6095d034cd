// Package compiler is Rosemary's planner: it decides where each node of an
// FHE program runs and what the plan costs. Code generation — lowering an
// operation to an mProgram, the stream program format — is package lower,
// which the planner calls to size and emit device code.
//
// Compile runs the passes of one table (passes in compile.go): validate,
// expand bootstrapping (ExpandBoot, into the operations and named
// constants package lower knows), CLCAO's rotation decomposition, schedule
// and residency hints, the cost model, the partition (Bare: the workload's
// segment hints; otherwise TDAP's min-cut, package tdap), segmentation,
// CLCAO's placement and the estimate. The result is a Plan: placement,
// segments, transfers, the estimated latency and mProgram sizes, and
// CLCAO's decisions (hot keys, streamed values) for the simulator to
// follow. A device segment becomes code on demand: Plan.SegmentProgram
// materialises it as one static mProgram, Plan.StreamSegment as the
// lower.StreamProgram a device runs over its stored data. An LWE PIR answer
// is only modelled: the device serves it natively (QueryLWE).
package compiler
