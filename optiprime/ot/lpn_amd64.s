//go:build amd64 && !purego

#include "textflag.h"

// IDX(OFF): AX = the byte offset in the table of the index whose stream
// word is at OFF(BX) (the word times k, over 2^32, times 16).
#define IDX(OFF) \
	MOVL  OFF(BX), AX; \
	IMULQ R8, AX; \
	SHRQ  $32, AX; \
	SHLQ  $4, AX

// PF(OFF) prefetches that entry; GATHER(OFF) XORs it into X0.
#define PF(OFF) \
	IDX(OFF); \
	PREFETCHT0 (SI)(AX*1)

#define GATHER(OFF) \
	IDX(OFF); \
	MOVOU (SI)(AX*1), X1; \
	PXOR  X1, X0

// GATHERB(OFF) is GATHER with the receiver's bit of the same index XORed
// into DX (the bits at R11).
#define GATHERB(OFF) \
	MOVL  OFF(BX), AX; \
	IMULQ R8, AX; \
	SHRQ  $32, AX; \
	XORB  (R11)(AX*1), DX; \
	SHLQ  $4, AX; \
	MOVOU (SI)(AX*1), X1; \
	PXOR  X1, X0

// AES3_AHEAD encrypts the next chunk's stream three counter blocks at a
// time (R9 the counter, R8 the IV's fixed half, X5–X15 the round keys)
// into R10, advancing R9 and R10 and counting R13 down.
#define AES3_AHEAD \
	MOVQ R9, AX; \
	BSWAPQ AX; \
	MOVQ R8, X2; \
	PINSRQ $1, AX, X2; \
	LEAQ 1(R9), AX; \
	BSWAPQ AX; \
	MOVQ R8, X3; \
	PINSRQ $1, AX, X3; \
	LEAQ 2(R9), AX; \
	BSWAPQ AX; \
	MOVQ R8, X4; \
	PINSRQ $1, AX, X4; \
	PXOR X5, X2; \
	PXOR X5, X3; \
	PXOR X5, X4; \
	AESENC X6, X2; \
	AESENC X6, X3; \
	AESENC X6, X4; \
	AESENC X7, X2; \
	AESENC X7, X3; \
	AESENC X7, X4; \
	AESENC X8, X2; \
	AESENC X8, X3; \
	AESENC X8, X4; \
	AESENC X9, X2; \
	AESENC X9, X3; \
	AESENC X9, X4; \
	AESENC X10, X2; \
	AESENC X10, X3; \
	AESENC X10, X4; \
	AESENC X11, X2; \
	AESENC X11, X3; \
	AESENC X11, X4; \
	AESENC X12, X2; \
	AESENC X12, X3; \
	AESENC X12, X4; \
	AESENC X13, X2; \
	AESENC X13, X3; \
	AESENC X13, X4; \
	AESENC X14, X2; \
	AESENC X14, X3; \
	AESENC X14, X4; \
	AESENCLAST X15, X2; \
	AESENCLAST X15, X3; \
	AESENCLAST X15, X4; \
	MOVOU X2, (R10); \
	MOVOU X3, 16(R10); \
	MOVOU X4, 32(R10); \
	ADDQ $48, R10; \
	ADDQ $3, R9; \
	SUBQ $3, R13

// func lpnGatherAsm(secret *block, u *byte, k uint64, dst *block, rows int, bits, bitsOut *uint8, rk *[176]byte, next *byte, blocks int, ctr uint64)
//
// Row r's indices are x = u_i·k >> 32 for the little-endian words u_i,
// i = 10r … 10r+9, of u (the chunk's AES-CTR stream, decoded here rather
// than into an index array first: the multiplies hide under the misses),
// and dst[r] ^= secret[x_10r] ⊕ … ⊕ secret[x_10r+9], bitsOut[r] ^=
// likewise from bits unless bits is nil.
//
// The table is larger than the last-level cache and the indices uniform,
// so nearly every load misses; while row r is summed, the ten entries of
// row r+6 are prefetched (PREFETCHT0 retires at once, where a load would
// hold its place in the reorder buffer until the data came), which keeps
// more misses in flight than the out-of-order window alone does. The bits
// table (one byte an entry) mostly hits in the cache and is not
// prefetched.
//
// The core would idle under those misses, so each row also encrypts three
// blocks of the next chunk's stream into next (AES-128 under the expanded
// key rk, counter blocks k ‖ big-endian ctr, ctr+1, …: the IV of
// lpnStream, whose counter never carries out of its low half), until
// blocks ≤ 0; any left when the rows end are encrypted then. Up to two
// blocks past the count are written. X5–X15 hold the round keys.
TEXT ·lpnGatherAsm(SB), NOSPLIT, $0-88
	MOVQ rk+56(FP), AX
	MOVOU 0(AX), X5
	MOVOU 16(AX), X6
	MOVOU 32(AX), X7
	MOVOU 48(AX), X8
	MOVOU 64(AX), X9
	MOVOU 80(AX), X10
	MOVOU 96(AX), X11
	MOVOU 112(AX), X12
	MOVOU 128(AX), X13
	MOVOU 144(AX), X14
	MOVOU 160(AX), X15
	MOVQ secret+0(FP), SI
	MOVQ u+8(FP), BX
	MOVQ k+16(FP), R8
	MOVQ dst+24(FP), DI
	MOVQ rows+32(FP), CX
	MOVQ bits+40(FP), R11
	MOVQ bitsOut+48(FP), R12
	MOVQ next+64(FP), R10
	MOVQ blocks+72(FP), R13
	MOVQ ctr+80(FP), R9
	TESTQ R11, R11
	JNZ  withbits

	CMPQ CX, $6
	JBE  tail

ahead:
	TESTQ R13, R13
	JLE   noaes
	AES3_AHEAD
noaes:
	PF(240)
	PF(244)
	PF(248)
	PF(252)
	PF(256)
	PF(260)
	PF(264)
	PF(268)
	PF(272)
	PF(276)
	MOVOU (DI), X0
	GATHER(0)
	GATHER(4)
	GATHER(8)
	GATHER(12)
	GATHER(16)
	GATHER(20)
	GATHER(24)
	GATHER(28)
	GATHER(32)
	GATHER(36)
	MOVOU X0, (DI)
	ADDQ $40, BX
	ADDQ $16, DI
	DECQ CX
	CMPQ CX, $6
	JA   ahead

tail:
	TESTQ CX, CX
	JZ    rest
	MOVOU (DI), X0
	GATHER(0)
	GATHER(4)
	GATHER(8)
	GATHER(12)
	GATHER(16)
	GATHER(20)
	GATHER(24)
	GATHER(28)
	GATHER(32)
	GATHER(36)
	MOVOU X0, (DI)
	ADDQ $40, BX
	ADDQ $16, DI
	DECQ CX
	JMP  tail

withbits:
	CMPQ CX, $6
	JBE  tailb

aheadb:
	TESTQ R13, R13
	JLE   noaesb
	AES3_AHEAD
noaesb:
	PF(240)
	PF(244)
	PF(248)
	PF(252)
	PF(256)
	PF(260)
	PF(264)
	PF(268)
	PF(272)
	PF(276)
	MOVOU (DI), X0
	XORL DX, DX
	GATHERB(0)
	GATHERB(4)
	GATHERB(8)
	GATHERB(12)
	GATHERB(16)
	GATHERB(20)
	GATHERB(24)
	GATHERB(28)
	GATHERB(32)
	GATHERB(36)
	MOVOU X0, (DI)
	XORB DX, (R12)
	INCQ R12
	ADDQ $40, BX
	ADDQ $16, DI
	DECQ CX
	CMPQ CX, $6
	JA   aheadb

tailb:
	TESTQ CX, CX
	JZ    rest
	MOVOU (DI), X0
	XORL DX, DX
	GATHERB(0)
	GATHERB(4)
	GATHERB(8)
	GATHERB(12)
	GATHERB(16)
	GATHERB(20)
	GATHERB(24)
	GATHERB(28)
	GATHERB(32)
	GATHERB(36)
	MOVOU X0, (DI)
	XORB DX, (R12)
	INCQ R12
	ADDQ $40, BX
	ADDQ $16, DI
	DECQ CX
	JMP  tailb

rest:
	TESTQ R13, R13
	JLE   noaesr
	AES3_AHEAD
noaesr:
	TESTQ R13, R13
	JG    rest
	RET
