// Package opticomp is OptiComp, OptiPrime's plaintext compression: the
// weight plaintexts of channel-encoded convolutions are sparse
// (C·Kh·Kw non-zero coefficients out of N), so instead of streaming full
// evaluation-domain plaintexts from memory the server stores only their
// non-zero blocks, packed into fixed-size segments, and an on-chip unit
// rebuilds the coefficient-domain polynomial (then NTTs it) before use.
//
// Format (little-endian):
//
//	header: "OPC" 0x01 | logN u8 | coefficient bits u8 | segment bytes u16 | segments u32
//	segment (exactly 'segment bytes' long): blocks, each
//	    meta u32 = position (bits 0-19) | length-1 (bits 20-30) | end (bit 31)
//	    data: length coefficients of 'coefficient bits' bits, bit-packed, byte aligned
//	  the block with end = 1 is the segment's last; the rest is zero padding.
//
// Fixed-size segments keep every segment aligned and addressable without
// parsing the ones before it (the alignment/address-calculation problem of
// variable-length sparse records); blocks are split at segment boundaries.
// Zero runs shorter than a block header are kept inside blocks when that is
// cheaper. Decompress validates everything (ordering, bounds, padding) and
// rebuilds the polynomial exactly.
package opticomp
