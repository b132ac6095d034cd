//go:build amd64 && !purego

#include "textflag.h"

// func lpnPassAsm(tab *block, ent *uint32, n int, dst *block, shift uint)
TEXT ·lpnPassAsm(SB), NOSPLIT, $0-40
	MOVQ tab+0(FP), SI
	MOVQ ent+8(FP), BX
	MOVQ n+16(FP), R10
	MOVQ dst+24(FP), DI
	MOVQ shift+32(FP), CX
	MOVL $1, R9
	SHLL CX, R9
	DECL R9
	CMPQ R10, $16
	JBE  tail

ahead:
	MOVL 64(BX), AX
	ANDL R9, AX
	SHLQ $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVL (BX), AX
	MOVL AX, DX
	SHRL CX, DX
	ANDL R9, AX
	SHLQ $4, AX
	SHLQ $4, DX
	MOVOU (SI)(AX*1), X0
	MOVOU (DI)(DX*1), X1
	PXOR X1, X0
	MOVOU X0, (DI)(DX*1)
	ADDQ $4, BX
	DECQ R10
	CMPQ R10, $16
	JA   ahead

tail:
	MOVL (BX), AX
	MOVL AX, DX
	SHRL CX, DX
	ANDL R9, AX
	SHLQ $4, AX
	SHLQ $4, DX
	MOVOU (SI)(AX*1), X0
	MOVOU (DI)(DX*1), X1
	PXOR X1, X0
	MOVOU X0, (DI)(DX*1)
	ADDQ $4, BX
	DECQ R10
	JNZ  tail
	RET

// func lpnTouchAsm(p *block, lines int)
TEXT ·lpnTouchAsm(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ lines+8(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   tdone
touch:
	ADDQ (SI), AX
	ADDQ $64, SI
	DECQ CX
	JNZ  touch
tdone:
	RET
