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
//     ciphertext at a time, its baby steps computed on the fly (hoisted)
//     and multiplied into all G·C/B partial sums, which stay on chip; when
//     they exceed the scratchpad, the outputs are tiled and each later
//     output tile needs the baby steps again. The paper recomputes them
//     ("hoisted automorphisms cost less than a single HBM access", §IV-C);
//     the model applies that criterion to the configured device rather than
//     assuming it: recompute, or read back the rotations the first tile
//     wrote, whichever is faster there. Its Galois keys are held resident,
//     streamed, or read once per computing output tile with all inputs
//     held; the schedule of least latency (then fewest bytes) is the one
//     reported, as the accelerator's compiler would choose it.
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
// first-principles assumptions stated beside each Config field.
//
// What the model says, and where it parts from the paper. With the default
// clusters (≈ 256 64-bit modular multipliers, what the U55C's DSPs allow)
// the layers are compute-bound: the plaintext-ciphertext products keep the
// modmul cluster busy 2.7× longer than HBM takes to stream the paper layer's
// 571 MB. OptiFlow then moves fewer bytes (0.46–0.95× by network) and
// matches the split's latency (1.00× on every network): its schedules that
// do the split's exact work are the fastest, and saved traffic buys no time
// while compute bounds both. The paper profiles the same workload at 0.6
// Ops/Byte as "heavily memory-bound" (§IV-A; the model computes 0.56 for the
// split) and says a hoisted automorphism costs less than an HBM access
// (§IV-C; here one costs 13× the 0.85 µs of reading a ciphertext), so its
// device has more arithmetic per byte of bandwidth than the DSP count above
// gives; it does not publish its cluster sizes. Report.NetworkLanes shows
// the networks at 2–8× the lanes, where the layers turn memory-bound as the
// paper profiles them and OptiFlow's saved traffic becomes time (1.16×
// ResNet-18, 1.30× ResNet-50 at 4×). The paper's ResNet-18 2.9 s and
// ResNet-50 14.6 s are whole inferences (both CPUs, the MPC nonlinear layers
// and the network, §I); the modeled accelerator's convolutions are 3% and 6%
// of them, consistent with the paper's finding that after acceleration
// communication dominates — NetworkResult.Paper quotes them beside the model.
package fpga
