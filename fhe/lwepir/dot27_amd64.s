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

// The batch kernel's limb mask, in memory: all sixteen vector registers
// hold sums, factors and a product.
DATA dot27mask<>+0(SB)/8, $0x7ffffff
DATA dot27mask<>+8(SB)/8, $0x7ffffff
DATA dot27mask<>+16(SB)/8, $0x7ffffff
DATA dot27mask<>+24(SB)/8, $0x7ffffff
GLOBL dot27mask<>(SB), RODATA|NOPTR, $32

// QTERM(K, A0, A1, A2): one query's three products of the split factor
// (Y13 = p0, Y12 = p1, Y14 = p0 + p1) with its pre-split key at K (k0,
// then k1 dot27KeyStride words on, then k0 + k1 as far again), into its
// sums A0, A1 (Karatsuba's middle) and A2.
#define QTERM(K, A0, A1, A2) \
	VPMULUDQ (K)(SI*1), Y13, Y15; \
	VPADDQ   Y15, A0, A0; \
	VPMULUDQ 16448(K)(SI*1), Y12, Y15; \
	VPADDQ   Y15, A2, A2; \
	VPMULUDQ 32896(K)(SI*1), Y14, Y15; \
	VPADDQ   Y15, A1, A1

// STOREQ(A0, A1, A2): a query's three sums to DI + R11 (its A0), then one
// DX and two DX further, at offset SI; R11 moves on to the next query's.
#define STOREQ(A0, A1, A2) \
	LEAQ    (DI)(R11*1), BX; \
	VMOVDQU A0, (BX)(SI*1); \
	ADDQ    DX, BX; \
	VMOVDQU A1, (BX)(SI*1); \
	ADDQ    DX, BX; \
	VMOVDQU A2, (BX)(SI*1); \
	ADDQ    DX, R11; \
	ADDQ    DX, R11; \
	ADDQ    DX, R11

// func dot27q4(acc *uint64, n, terms int, pt *uint64, ks **uint64, qs int)
// For four queries sharing the factors: pt holds the factors transposed,
// four coefficients of every term in turn, strip by strip, 8 words apart
// (dot27StripPad: pt[s·(4·terms + 8) + 4t + l] is term t's coefficient
// 4s + l); ks[t] points at the first
// query's pre-split key for term t, and each next query's is qs bytes
// further. Sets query q's sums at acc + 3qn words (A0, A1, A2, n words
// each) to Σ_t over the terms, for i < n (a multiple of 4). Four
// coefficients at a time, all terms: each factor is loaded and split once
// for the four queries, and the twelve sums stay in registers.
TEXT ·dot27q4(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ pt+24(FP), R8
	MOVQ qs+40(FP), R12
	MOVQ CX, DX
	SHLQ $3, DX
	XORQ SI, SI

strip:
	CMPQ CX, $4
	JLT  doneq4
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	MOVQ terms+16(FP), R10
	MOVQ ks+32(FP), R9

term:
	VMOVDQU  (R8), Y12
	VPAND    dot27mask<>(SB), Y12, Y13
	VPSRLQ   $27, Y12, Y12
	VPADDQ   Y12, Y13, Y14
	MOVQ     (R9), AX
	QTERM(AX, Y0, Y1, Y2)
	ADDQ     R12, AX
	QTERM(AX, Y3, Y4, Y5)
	ADDQ     R12, AX
	QTERM(AX, Y6, Y7, Y8)
	ADDQ     R12, AX
	QTERM(AX, Y9, Y10, Y11)
	ADDQ     $32, R8
	ADDQ     $8, R9
	DECQ     R10
	JNZ      term

	ADDQ $64, R8 // dot27StripPad
	XORQ R11, R11
	STOREQ(Y0, Y1, Y2)
	STOREQ(Y3, Y4, Y5)
	STOREQ(Y6, Y7, Y8)
	STOREQ(Y9, Y10, Y11)
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  strip

doneq4:
	VZEROUPPER
	RET

// func dot27load(dst *uint64, rows **uint64, terms, n, stride int)
// dotQ4.load's copy: dst[(s/4)·stride + 4t + l] = rows[t][s + l] for t <
// terms and s < n (a multiple of 8), four words at a time, row by row.
// The rows lie a polynomial apart and come from memory: each is read
// while the row four ahead is prefetched, a line per 64 bytes copied.
TEXT ·dot27load(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), R8
	MOVQ terms+16(FP), R10
	MOVQ n+24(FP), R11
	MOVQ stride+32(FP), R12
	SHLQ $3, R12
	LEAQ (R8)(R10*8), R9 // the end of rows

lrow:
	MOVQ  (R8), SI
	LEAQ  32(R8), AX
	MOVQ  SI, R13
	CMPQ  AX, R9
	JGE   lnopf
	MOVQ  (AX), R13 // row t+4, prefetched while row t is copied

lnopf:
	MOVQ DI, BX
	XORQ CX, CX

lcol:
	PREFETCHT0 (R13)(CX*8)
	VMOVDQU    (SI)(CX*8), Y0
	VMOVDQU    32(SI)(CX*8), Y1
	VMOVDQU    Y0, (BX)
	ADDQ       R12, BX
	VMOVDQU    Y1, (BX)
	ADDQ       R12, BX
	ADDQ       $8, CX
	CMPQ       CX, R11
	JLT        lcol

	ADDQ $8, R8
	ADDQ $32, DI
	DECQ R10
	JNZ  lrow
	VZEROUPPER
	RET
