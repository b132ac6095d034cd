// Package matvec is the first dimension of an LWE-based PIR answer: a byte
// matrix times a vector of uint32, modulo 2^32 (uint32 wrap-around), the one
// multiply-add per database byte that decides whether a scan runs at memory
// speed.
//
// A query vector is prepared once (NewQuery) in the layout of the fastest
// kernel on this CPU, chosen at init with golang.org/x/sys/cpu:
//
//   - "avx512-vnni": the vector as four planes of signed 8-bit digits,
//     q = d0 + 2^8 d1 + 2^16 d2 + 2^24 d3 (mod 2^32), each plane multiplied
//     with the matrix bytes by vpdpbusd (u8 × s8, four products summed into a
//     32-bit lane), the planes' sums recombined by shifts;
//   - "avx2": two planes of signed 16-bit digits, q = d0 + 2^16 d1, the
//     matrix bytes widened to 16 bits (vpmovzxbw) and multiplied by vpmaddwd;
//   - "purego": the words themselves, a plain uint32 multiply-add (built with
//     -tags purego, and on every other architecture).
//
// Every product and pair sum fits in 32 signed bits (255 × 2^15 × 2 < 2^31),
// and the lanes and planes are summed with wrap-around, so each kernel equals
// the uint32 reference exactly for every input.
//
// The kernels stream a row-major tile of the matrix: blocks of four rows share
// every digit load, and a batch of queries reads each block of the tile from
// memory once (MulAddBatch), the block kept in cache while every query passes
// over it. A single query over rows of 1024 bytes and more (an LWE tile's
// are 2048) reads the rows one after another instead, the whole tile one
// stream prefetched ahead: memory-bound, it gains more from lines in flight
// than from shared digit loads.
//
// The functions hold no state: several goroutines may run them at once on
// disjoint accumulators, for instance each on its own range of a tile's
// rows (MulAdd(acc[lo:hi], tile[lo*cols:hi*cols], q, off)), which is how a
// scan uses every core.
package matvec
