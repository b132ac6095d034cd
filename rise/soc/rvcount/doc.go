// Package rvcount counts the RV64 instructions a program executes per
// phase, under qemu-riscv64 (linux-user) with a small TCG plugin, so the
// RISE SoC model (package rise) can charge software phases measured
// instructions instead of hand-derived costs.
//
// Method. The plugin (csrc/insncount.c, built here with the host C
// compiler) gives every translated block an execution callback carrying
// the block's instruction count and adds it to the executing guest
// thread's counter. The measured program marks phase boundaries with a
// system call that does not exist (MarkSyscall, the phase as argument):
// the kernel answers ENOSYS, and the plugin logs the calling thread's count
// at that moment. The instructions between two marks belong to the phase
// named by the second; mark 0 opens the measured region. One run measures
// every phase, in the program's own thread (Go drivers lock their thread),
// and counts are exact and repeatable (tested against a hand-written
// assembly program with a known count).
//
// Drivers: rise/edge/internal/rvphases (our encryptor, through
// edge.EncryptPhased and DecryptPhased) and csrc/sealdriver.c
// (SEAL-Embedded's asymmetric encryption, through the library's own
// functions in the order its ckks_encode_encrypt_asym calls them), built
// statically for riscv64 by MeasureEdge and MeasureSEAL.
package rvcount

// MarkSyscall is the system call number drivers use as the phase marker:
// unassigned on Linux riscv64 (whose calls are numbered below 500) and small
// enough to load with one instruction.
const MarkSyscall = 1984
