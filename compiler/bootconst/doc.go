// Package bootconst supplies the constants of the bootstrapping circuit
// compiler.ExpandBoot emits, from Lattigo v6's CKKS bootstrapping
// (circuits/ckks/bootstrapping): the plaintext diagonals of its
// CoeffsToSlots and SlotsToCoeffs DFT matrices (the Stored public
// plaintexts of the expansion) and every named scalar (lower.BootConst:
// the ScaleDown and ModUp factors, the trace's inverse, ±i, the EvalMod
// offset, the Paterson–Stockmeyer coefficients at their target scales, the
// Chebyshev and double-angle constants). Provider implements
// engine.ConstantProvider, so an engine.Executor runs a whole
// bootstrapping — on the host with Lattigo's arithmetic or on the device
// interpreter — with the values Lattigo's own evaluator uses. The compiler
// names the constants; only this package imports Lattigo's bootstrapping
// circuits to give their values.
package bootconst
