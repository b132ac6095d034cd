// Package soc is a cycle model of the four edge systems of the RISE paper
// (Azad et al., "RISE: RISC-V SoC for En/decryption Acceleration on the
// Edge for Homomorphic Encryption", IEEE, section VI): a 1 GHz in-order
// RV64 core (BlackParrot) running the whole CKKS message-to-ciphertext and
// ciphertext-to-message path in software ("baseline"), RACE (en/decryption
// offloaded to one butterfly unit), RISE-1BFU (error sampling offloaded too)
// and RISE-MaxBFU (32 parallel BFUs).
//
// The model is analytic and simulated, never fitted to the paper's results:
//
//   - Software on the core is measured, not derived: the RV64 instructions
//     each phase executes (encode, sample, lift, ntt, product; dec-product,
//     intt, crt, decode — edge.Phase) were counted under qemu-riscv64 with
//     a TCG plugin (package rvcount) for two baselines at every preset: our
//     encryptor ("edge", through edge.EncryptPhased/DecryptPhased) and
//     SEAL-Embedded, the paper's baseline software ("seal-embedded",
//     encryption only: it has no decryptor, so its systems decrypt with
//     ours). The counts are riscv_counts.json (Profile), written by
//     `rosemary edge soc -measure-riscv [-seal-embedded CHECKOUT] -write`.
//     A phase costs instructions × CoreCosts.CPI (1: BlackParrot's
//     single-issue rate, a lower bound) plus streaming misses when a
//     polynomial outgrows the 32 KB D-cache, charged per word the phase
//     touches (operation counts along edge's code path, Counts).
//   - The first-principles per-operation costs (CoreCosts' constants) stay
//     as the "derived" baseline, to report beside the measurement.
//   - The accelerator is one (or 32) fully pipelined BFU with one butterfly
//     per cycle (paper §III-B), a Keccak round unit (one round per cycle,
//     1088-bit output, paper §III-A) and a sampler producing one coefficient
//     per cycle; data moves over a 64-bit link, one word per cycle, and the
//     public-key limbs load into the idle bank group while the NTT runs
//     (paper Fig. 5). The phases of a conversion (encode on the core,
//     sampling, en/decryption) run one after the other, and the frames'
//     ciphertexts are converted one after the other (no pipelining).
//   - Power and area come from the paper's component figures (§VI-B): the
//     baseline's 27.19 mW and the percentage increases of each system, taken
//     at the smallest N for the first number of each quoted range and at the
//     largest N for the second, linear in log2 N between. Area is in units of
//     the baseline SoC's area (the paper's absolute mm² are only in its Figure
//     8(b), not in its text).
//   - Frames: an 8-bit grayscale frame of w×h pixels needs
//     ⌈8wh / (N/2·log q)⌉ ciphertexts (§II-D) of 2·N·log Q bits each; the
//     mid-band 5G limits divide 900 Mbit/s (maximum) and 100 Mbit/s
//     (minimum) by the frame's ciphertext bits.
//
// Table evaluates every system on one baseline at every (N, log Q) point
// of edge.Presets and returns a Report (JSON-able) whose Model summary
// (Summarize) and Compare set the model's speed-up ranges and frame rates
// beside the paper's quoted Figure 7 and Figure 10 values (Paper), with
// the dominant measured phase named wherever they differ by over 25%;
// FrameVerdict sets the baseline's QQVGA rate at N = 4096 against the
// paper's "not even one frame per second".
package soc
