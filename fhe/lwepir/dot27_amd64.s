//go:build amd64 && !purego

#include "textflag.h"

// The packing's dot products with AVX2 (dot27.go): every word below 2^54
// is split in two 27-bit limbs, x = x1·2^27 + x0, so that VPMULUDQ (32×32
// → 64 bits) multiplies limbs exactly; the products are added into three
// 64-bit sums a coefficient (TERM), which the caller reduces before they
// could wrap.

// LIMBS(SRC, LO, HI): LO = SRC mod 2^27, HI = SRC >> 27 (Y15 holds the
// mask 2^27 − 1 in every lane).
#define LIMBS(SRC, LO, HI) \
	VPSRLQ $27, SRC, HI; \
	VPAND  Y15, SRC, LO

// TERM(P, K): adds one term's products for four coefficients to Y0, Y1,
// Y2 (uses Y3–Y8): A0 += p0·k0, A2 += p1·k1 and, Karatsuba's way, Y1 +=
// (p0 + p1)·(k0 + k1), from which the caller subtracts A0 and A2 (three
// VPMULUDQ a term, not four: the multiplier is this core's narrowest
// port).
#define TERM(P, K) \
	VMOVDQU  P, Y3; \
	VMOVDQU  K, Y4; \
	LIMBS(Y3, Y3, Y5); \
	LIMBS(Y4, Y4, Y6); \
	VPMULUDQ Y3, Y4, Y7; \
	VPADDQ   Y7, Y0, Y0; \
	VPMULUDQ Y5, Y6, Y8; \
	VPADDQ   Y8, Y2, Y2; \
	VPADDQ   Y3, Y5, Y3; \
	VPADDQ   Y4, Y6, Y4; \
	VPMULUDQ Y3, Y4, Y7; \
	VPADDQ   Y7, Y1, Y1

// LOADACC / STOREACC: A0, A1, A2 at DI, DI+DX, DI+2·DX, offset SI.
#define LOADACC \
	VMOVDQU (DI)(SI*1), Y0; \
	LEAQ    (DI)(DX*1), BX; \
	VMOVDQU (BX)(SI*1), Y1; \
	LEAQ    (BX)(DX*1), BX; \
	VMOVDQU (BX)(SI*1), Y2

#define STOREACC \
	VMOVDQU Y0, (DI)(SI*1); \
	LEAQ    (DI)(DX*1), BX; \
	VMOVDQU Y1, (BX)(SI*1); \
	LEAQ    (BX)(DX*1), BX; \
	VMOVDQU Y2, (BX)(SI*1)

// SETUP: the mask in Y15, n in CX, 8n in DX, SI = 0.
#define SETUP \
	MOVQ         $0x7ffffff, AX; \
	MOVQ         AX, X15; \
	VPBROADCASTQ X15, Y15; \
	MOVQ         CX, DX; \
	SHLQ         $3, DX; \
	XORQ         SI, SI

// func dot27x3(acc *uint64, n int, p0, p1, p2, k0, k1, k2 *uint64)
// Adds p0[i]·k0[i] + p1[i]·k1[i] + p2[i]·k2[i], in limbs, to the sums at
// acc for i < n (a multiple of 4): A0 at acc[0, n), A1 at acc[n, 2n), A2
// at acc[2n, 3n).
TEXT ·dot27x3(SB), NOSPLIT, $0-64
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ p0+16(FP), R8
	MOVQ p1+24(FP), R9
	MOVQ p2+32(FP), R10
	MOVQ k0+40(FP), R11
	MOVQ k1+48(FP), R12
	MOVQ k2+56(FP), R13
	SETUP

loop3:
	CMPQ CX, $4
	JLT  done3
	LOADACC
	TERM((R8)(SI*1), (R11)(SI*1))
	TERM((R9)(SI*1), (R12)(SI*1))
	TERM((R10)(SI*1), (R13)(SI*1))
	STOREACC
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  loop3

done3:
	VZEROUPPER
	RET

// func dot27x1(acc *uint64, n int, p, k *uint64)
// dot27x3 for one term.
TEXT ·dot27x1(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ p+16(FP), R8
	MOVQ k+24(FP), R11
	SETUP

loop1:
	CMPQ CX, $4
	JLT  done1
	LOADACC
	TERM((R8)(SI*1), (R11)(SI*1))
	STOREACC
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  loop1

done1:
	VZEROUPPER
	RET
