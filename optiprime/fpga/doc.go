// Package fpga models the OptiPrime server's HE accelerator (Yu et al.,
// "OptiPrime: Optimizing Private Inference through Protocol-Hardware
// Co-design", arXiv:2609.16898, §II-B and §IV-C): an FPGA with
// HBM, an on-chip scratchpad and four compute clusters (NTT, automorphism,
// modular multiplication, modular addition), and compares two orders of a
// convolution layer's BSGS evaluation:
//
//   - the computation-efficient BSGS split, in the order optiprime/linear's
//     schedule runs it: all B·Ni baby-step ciphertexts of a tile are
//     materialized (hoisted automorphisms of the Ni inputs), then every
//     output group makes C/B passes over them; when they exceed the
//     scratchpad, the part that does not fit is written to HBM once and
//     read back on every access (the cyclic pass order defeats any cache, so
//     the resident part is pinned and the rest streams);
//   - OptiFlow's reuse-centric, output-stationary order: one input
//     ciphertext at a time, its baby steps recomputed on the fly (hoisted)
//     and multiplied into all G·C/B partial sums, which stay on chip; when
//     they exceed the scratchpad, the outputs are tiled and each output tile
//     re-reads the inputs and recomputes their baby steps. Its Galois keys
//     are held resident, streamed, or read once per output tile with all
//     inputs held, whichever moves the fewest bytes.
//
// The layer's structure — input ciphertexts per tile Ni, output groups G,
// the channel block C, the baby-step count B, spatial tiles, automorphisms
// and plaintext-ciphertext products — comes from the real optiprime/linear Plan
// of the layer (FromPlan), and optiprime/nets supplies the networks. The
// "computation-efficient" baseline split takes, among the powers of two
// dividing C, the B with the least modeled compute time (baby steps are
// hoisted and cheaper than giant steps, so it prefers many baby steps, the
// case the paper describes); WithBaby re-derives the counts for another B
// with the same schedule structure, and a test checks that at the plan's own
// B they equal the plan's counters. The noise of a B other than the plan's
// is not re-verified.
//
// The model is analytic (documented at Config and in cost.go): every cluster
// processes its operations at its lane throughput and the clusters and HBM
// overlap perfectly, so a layer's latency is max(compute time of the busiest
// cluster, HBM bytes / bandwidth) — bounded below by both. Figures are
// simulated, never fitted to the paper's results; parameters are the
// paper's platform (AMD Alveo U55C: 16 GB HBM2 at 460 GB/s) and
// first-principles assumptions stated beside each Config field. With the
// default cluster sizes the layers are compute-bound (the plaintext-
// ciphertext products dominate the modmul cluster), so OptiFlow's recomputed
// baby steps cost more time than its saved traffic; Table's lane and
// bandwidth sweeps show where the order flips.
package fpga
