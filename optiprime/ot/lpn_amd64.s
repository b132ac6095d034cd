//go:build amd64 && !purego

#include "textflag.h"

// func lpnGatherAsm(secret *block, idx *int32, dst *block, rows int)
//
// dst[r] ^= secret[idx[10r]] ⊕ … ⊕ secret[idx[10r+9]] for r < rows. The
// table is larger than the last-level cache and the indices uniform, so
// nearly every load misses; while row r is summed, the ten entries of row
// r+6 are prefetched (PREFETCHT0 retires at once, where a load would hold
// its place in the reorder buffer until the data came), which keeps more
// misses in flight than the out-of-order window alone does. Indices are
// below the table's length (the caller draws them so).
TEXT ·lpnGatherAsm(SB), NOSPLIT, $0-32
	MOVQ secret+0(FP), SI
	MOVQ idx+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ rows+24(FP), CX
	CMPQ CX, $6
	JBE  tail

ahead:
	MOVL 240(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 244(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 248(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 252(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 256(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 260(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 264(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 268(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 272(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL 276(BX), AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVOU (DI), X0
	MOVL 0(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 4(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 8(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 12(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 16(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 20(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 24(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 28(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 32(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 36(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVOU X0, (DI)
	ADDQ $40, BX
	ADDQ $16, DI
	DECQ CX
	CMPQ CX, $6
	JA   ahead

tail:
	TESTQ CX, CX
	JZ    done
	MOVOU (DI), X0
	MOVL 0(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 4(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 8(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 12(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 16(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 20(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 24(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 28(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVL 32(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X1
	PXOR X1, X0
	MOVL 36(BX), AX
	SHLQ $4, AX
	MOVOU (SI)(AX*1), X2
	PXOR X2, X0
	MOVOU X0, (DI)
	ADDQ $40, BX
	ADDQ $16, DI
	DECQ CX
	JMP tail

done:
	RET
