// Package isa defines mProgram, the instruction set of the Rosemary
// in-storage FHE engine (Rosemary paper, Table III), and nothing that runs it.
//
// A Program is a configuration header — the paper's config(): ring degree,
// the RNS moduli, scalar constants, Galois elements and base-conversion
// bases — followed by fixed 16-byte instructions. Every operand is resolved
// at compile time: a limb slot in the SRAM buffer or eDRAM scratchpad, an
// object limb in device DRAM or NAND, or an index into a config table.
//
// Instructions (why each exists):
//
//	NTT, INTT          Out = (i)NTT(A) over modulus Mod                 (Table III)
//	MODADD, MODSUB     Out = A ± B mod q; B may be a scalar constant     (Table III; SUB for ModDown/Rescale)
//	MODMUL             Out = A·B·2^-64 mod q (Montgomery, as the keys are
//	                   stored) or A·B mod q with .plain; B may be scalar  (Table III)
//	MODMAC             Out += A·B (Montgomery or .plain)                  (Table III: key inner product)
//	AUTOMORPH          Out = σ_gal(A) in the NTT domain; B = Galois index (Table III)
//	BCONV              base conversion of the k limbs starting at A to the
//	                   m limbs starting at Out, basis table entry B; runs on
//	                   the NTT datapath's MAC units (paper §FHE Engine). It is
//	                   one instruction, not k·m MODMACs, because its overflow
//	                   correction needs all k inputs of a coefficient at once.
//	                   .center selects Lattigo's single-modulus centered lift,
//	                   .exact the exact lift x mod p used by rescaling.
//	LD, ST             move one limb between DRAM/NAND objects and SRAM/eDRAM (Table III)
//	LWEMAC             Out[r] += Σ_{j<4} byte_j(A[r]) · W[4g+j] mod 2^32 for every
//	                   coefficient r (ours, not in Table III: the first dimension
//	                   of an LWE PIR, SimplePIR's one 32-bit multiply-add per
//	                   database byte). A holds four columns of a byte matrix,
//	                   row r's four bytes packed little-endian in word r; B names
//	                   slot W and group g (isa.Words); operands are read as
//	                   32-bit words and the sum wraps modulo 2^32 — no modulus,
//	                   so the modulus field is 0 and not printed. A word lane
//	                   multiplies a byte by a 32-bit word each cycle.
//
// Binary encoding of an instruction (little endian):
//
//	byte 0      opcode
//	byte 1      modulus index (into Config.Moduli)
//	bytes 2–3   flags
//	bytes 4–7   A   (address, or immediate)
//	bytes 8–11  B   (address, or table index)
//	bytes 12–15 Out (address)
//
// An address packs a memory space in its top 3 bits and an index below:
// slots for SRAM/eDRAM, and object<<12 | limb for DRAM and NAND objects.
package isa
