// Package mpcbench holds the measurements behind `rosemary mpc bench`: the
// HE linear-layer protocols (cheetah, optiencode, optiencode-bsgs) on the
// ResNet-18 layer OptiPrime compares them on (Co = Ci = 256, H = W = 14,
// 3×3, N = 8192), the whole-network counts of package nets, and the MNIST
// private inference of package infer.
//
// Every row says how it was obtained:
//
//   - measured: run here. MeasureLayer executes one layer with random
//     weights and input shares, sends the client's and the server's
//     messages through a transport pipe (bytes and flights counted as on
//     TCP, framing included), and checks that the output shares add up to
//     the plaintext convolution mod 2^ℓ (verified). cpu_s is the CPU time
//     of the thread doing encryption, evaluation and decryption
//     (CLOCK_THREAD_CPUTIME_ID on Linux, so other processes on a shared
//     machine do not inflate it; wall_s beside it); weight encoding is
//     offline: prep_s. MNIST rows come from a real
//     session (infer.Evaluate over a pipe); their times are the client's
//     wall clock per phase, which includes the server's computation.
//   - projected: counters from the real linear plans (the same code the
//     protocols execute, via nets.Count), computation time from unit costs
//     measured here in thread CPU time (MeasureUnits: one encryption, plaintext product,
//     automorphism, output re-randomization + compression + decryption),
//     with one upload and one download flight per layer. Nonlinear layers
//     are not in the network projections. For the measured paper layer,
//     projected_cpu_s shows the unit-cost model beside the measurement.
//
// lan_s and wan_s add the link model (package link: LAN 3 Gbit/s, 0.3 ms
// RTT; WAN 400 Mbit/s, 40 ms RTT, quoted presets) to cpu_s.
package mpcbench
