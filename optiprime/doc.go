// Package optiprime is the root of the hybrid HE-MPC private-inference tree
// (OptiPrime, with Cheetah as the baseline protocol family). A client holds
// the input, a server holds the model; linear layers run under RLWE
// homomorphic encryption, nonlinear layers under two-party computation, and
// the two meet in additive secret shares mod 2^ℓ.
//
// Subpackages, one idea each (lower ones do not import higher ones):
//
//	share      additive sharing mod 2^ℓ, fixed point (scale 12), PRG, bit packing
//	transport  framed, size-limited, versioned frames with byte/flight counters, over mutual TLS
//	link       latency projection from measured bytes and flights (LAN/WAN, sweeps)
//	ot         base OT (Chou–Orlandi) and IKNP OT extension, 1-of-2 and 1-of-N
//	nonlinear  millionaires' comparison, DReLU/ReLU, truncation, max-pool on shares
//	linear     HE convolution / matrix protocols (cheetah, optiencode, BSGS)
//	opticomp   sparse weight-plaintext compression (OptiComp)
//	nets       layer-shape generators for the evaluated networks
//	wire       the HE-MPC sessions' shared hello, abort and expected-frame receive
//	graph      fixed-point residual networks (ResNet-18/50, reduced) and their reference
//	e2e        two-party end-to-end inference of a graph network, measured per operation
//
// This package itself has no code.
package optiprime
