// Package nonlinear holds the two-party protocols for the nonlinear layers of
// private inference on additive shares mod 2^ℓ (package share): the
// millionaires' comparison, DReLU, ReLU, truncation by 2^s (fixed point) and
// max-pool. Security is semi-honest; there is no trusted dealer: every
// correlation comes from silent OT extension (package ot, Ferret) run
// between the parties.
//
// Party 0 is the server end of the transport, party 1 the client end. Both
// call the same methods with the same batch sizes, in the same order.
//
// # Millionaires' comparison
//
// After CrypTFlow2 (Rathee et al., CCS 2020), which Cheetah reuses: to compute
// shares of 1{a > b} for P0's k-bit a and P1's k-bit b, both split their
// inputs into q = ⌈k/4⌉ blocks of m = 4 bits (the top block zero-extended).
// For each block P0 samples bits (g, e) and offers, in a 1-out-of-16 OT
// (Naor–Pinkas over four silent correlated OTs), the 16 two-bit messages (g ⊕ 1{a_j > v}, e ⊕ 1{a_j = v}) for v = 0…15; P1
// chooses v = b_j. The leaves are combined in a binary tree,
//
//	gt = gt_hi ⊕ (eq_hi ∧ gt_lo),   eq = eq_hi ∧ eq_lo,
//
// (the XOR is exact because gt_hi and eq_hi never both hold). Each level's
// ANDs of shared bits are computed from two chosen OTs, one per direction
// and both in the same two flights, instead of Beaver triples:
// (a0⊕a1)(b0⊕b1) = a0b0 ⊕ a1b1 ⊕ a0b1 ⊕ a1b0, and P_i learns
// r_{1-i} ⊕ a_i·b_{1-i} by choosing with a_i between (r, r ⊕ b) offered by
// P_{1-i}. One AND serves eq_hi ∧ (gt_lo, eq_lo) as a two-bit message.
//
// # DReLU, ReLU, truncation, max-pool
//
// DReLU(x) = 1{x ≥ 0} = 1 ⊕ msb(x0) ⊕ msb(x1) ⊕ carry, with carry the
// millionaires' output for x0 mod 2^{ℓ-1} > 2^{ℓ-1}-1-(x1 mod 2^{ℓ-1}).
// ReLU(x) = DReLU(x)·x through a multiplexer made of two correlated OTs:
// P_i, as sender, correlates Δ = (1-2d_i)·x_i and, as receiver, chooses with
// d_i, which yields additive shares of (d0 ⊕ d1)(x0 + x1).
//
// Truncation by 2^s uses the wrap bit w = 1{X0 + X1 ≥ 2^ℓ} of the biased
// shares X0 = x0 + 2^{ℓ-1}, X1 = x1 (millionaires on ℓ bits, then a
// boolean-to-arithmetic conversion by one correlated OT):
// (X0 >> s) + (X1 >> s) − w·2^{ℓ-s} − 2^{ℓ-1-s} = ⌊x/2^s⌋ − c with c ∈ {0,1}
// the carry out of the low s bits. So Truncate returns ⌊x/2^s⌋ or one less,
// for every x in the signed range, never a large error (unlike the local
// SecureML truncation, which fails with probability ≈ |x|/2^ℓ).
//
// TruncateExact adds the low halves' carry back (a second comparison, in
// the same millionaires' run as the wrap bit: several batches of their own
// widths share a run's passes and tree levels). ReLUTruncate computes
// ⌊ReLU(x)/2^s⌋ with the truncation's carry from the ReLU's run and the
// truncation applied before the multiplexer.
//
// Max(x, y) = y + ReLU(x − y), exact when x − y stays in the signed range
// (|x|, |y| < 2^{ℓ-2}); MaxPool reduces each window by a tree of Max.
// MaxPoolNonneg does the same for values known to lie in [0, 2^b) — a
// truncated ReLU's outputs — with each comparison over the low b + 1 bits
// of the shares (local reduction mod 2^{b+1} keeps them shares, and the
// difference's sign is that ring's top bit): fewer leaves, sometimes a
// tree level fewer.
//
// # Cost
//
// With ℓ = 37 a ReLU costs 9 one-out-of-16 OTs (4 bits from the client,
// 64 bits back), 8 ANDs (a chosen OT each way: 1 bit and 4 bits) and 2
// correlated OTs (1 bit and ℓ bits): 60 bytes and 12 flights (6 round
// trips) per batch, plus 54 pooled correlated OTs, which Ferret makes for
// ≈ 0.056 bytes each (one 0.56 MB, 2-flight iteration per ≈ 10 M, run when
// a pool runs short). A large batch keeps those flights: its leaves go in
// frames of 2^16 values, every frame of a pass (up to 2^24 pooled OTs) in
// one flight each way, and the tree combines the whole batch, two flights
// a level (ResNet-18's first ReLU, 802,816 values: 14 flights, where one
// pass per 2^16 values took 132). Setup: 128 base OTs, 47,709 IKNP OTs and one small
// Ferret iteration each way (≈ 2.3 MB). Over IKNP and KK13 the same ReLU
// moved 629 bytes.
//
// Why m = 4 and not 3: over silent OT a leaf costs m bits up and 2·2^m
// bits back and an AND of the tree 10 bits, so a k-bit comparison's ⌈k/m⌉
// leaves and ⌈k/m⌉ − 1 ANDs cost, at k = 36 (a ReLU's), 404 bits at m = 4
// and 338 at m = 3, whose 12 leaves take the same four tree levels as
// m = 4's 9. Measured at ℓ = 37 (BenchmarkReLU, pool refills included):
// 75.8 bytes a ReLU at m = 4, 67.6 at m = 3, 84.8 at m = 2 (a fifth
// level); but m = 3 draws 58 correlated OTs a ReLU instead of 52, and
// Ferret's encoding is most of the CPU: 2^16 ReLUs took both parties
// 0.85–1.05 CPU-s at m = 4 and 0.92–1.05 at m = 3 (four alternated runs of
// BenchmarkReLUNetwork each, medians 0.92 and 1.02). The 8.25 bytes saved
// cost ≈ 0.75 µs of wall a ReLU, which pays only below ≈ 11 MB/s:
// ResNet-18 end to end with m = 3 against m = 4 (commits c005a57 and
// b1b4eb8, one run each, the same machine) moved 52 MB less and took 4–6 s
// less in the nonlinear layers at 10 MB/s + 100 ms, 2.5–9 s more on
// loopback.
//
// # Parallelism
//
// A batch runs on all GOMAXPROCS cores of a party, over one OT instance per
// direction: the heavy local work is split inside package ot (the Ferret
// trees and LPN rows, the correlation-robust hashing, the packed leaves'
// masks, the silent requests' corrections), and this package splits its own
// per-element loops (the leaves' messages with their random shares, each
// range drawing from its own PRG seeded from the party's; the tree levels'
// gathers and scatters; the ANDs' masks; the multiplexer) into splitWidth
// ranges. The split is local: bytes, flights and outputs do not depend on
// it, and two parties may split differently.
//
// Why not SCI's design (each thread its own OT instance and channel, the
// batch cut into per-thread sub-batches): a CPU profile of ReLU batches
// over the regular Ferret set (BenchmarkReLUNetwork, both parties on this
// 2-core machine) puts 88% of the CPU inside loops already split over the
// cores, 62% in Ferret's LPN encoding alone, and that encoding is bound by
// memory: a gather at random from a 9.4 MB table, above the 8 MB
// last-level cache. A second OT instance per party doubles those tables
// (and the setup, and the pools), where the remaining serial 12% — split
// here now — is what the profile leaves to gain.
package nonlinear
