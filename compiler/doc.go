// Package compiler turns FHE programs into mPrograms for the Rosemary
// engines. This file set holds the lowering of single homomorphic
// operations to micro-operations; key switching is the hybrid scheme
// (Decompose → INTT → BConv → NTT → MODMAC with the evaluation key →
// ModDown) over dnum digits, written to compute exactly what Lattigo v6's
// evaluator computes so that the interpreter's outputs are bit-identical.
package compiler
