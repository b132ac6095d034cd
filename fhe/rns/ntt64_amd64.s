//go:build amd64 && !purego

#include "textflag.h"

// AVX-512F/DQ NTT kernels for primes 2^50 ≤ q < 2^62, the IFMA kernels of
// ntt_amd64.s with 64-bit Shoup butterflies (MulShoupLazy, eight lanes at a
// time); lazy outputs are congruent to nttGo's and inttGo's, canonical ones
// identical.
//
// Register conventions: Z31 = q, Z30 = 2q, Z29 = 2^32 − 1 (broadcast);
// Z16–Z20 are scratch for SHOUP64.

// SHOUP64 sets OUT = X·W − ⌊X·WS/2^64⌋·q mod 2^64 ∈ [0, 2q) (MulShoupLazy):
// the high half of X·WS from four 32×32-bit products (WSH = WS >> 32).
// OUT must differ from X.
#define SHOUP64(X, W, WS, WSH, OUT) \
	VPSRLQ   $32, X, Z16;   \
	VPMULUDQ WS, X, Z17;    \
	VPMULUDQ WSH, X, Z18;   \
	VPMULUDQ WS, Z16, Z19;  \
	VPMULUDQ WSH, Z16, Z20; \
	VPSRLQ   $32, Z17, Z17; \
	VPADDQ   Z17, Z19, Z19; \
	VPANDQ   Z29, Z19, Z17; \
	VPADDQ   Z17, Z18, Z18; \
	VPSRLQ   $32, Z19, Z19; \
	VPSRLQ   $32, Z18, Z18; \
	VPADDQ   Z19, Z20, Z20; \
	VPADDQ   Z18, Z20, Z20; \
	VPMULLQ  W, X, OUT;     \
	VPMULLQ  Z31, Z20, Z20; \
	VPSUBQ   Z20, OUT, OUT

// CT_BFLY64: Cooley–Tukey butterfly on X, Y ∈ [0, 4q).
#define CT_BFLY64(X, Y, W, WS, WSH, T, V) \
	VPSUBQ  Z30, X, T;             \
	VPMINUQ T, X, X;               \
	SHOUP64(Y, W, WS, WSH, V);     \
	VPADDQ  Z30, X, T;             \
	VPADDQ  V, X, X;               \
	VPSUBQ  V, T, Y

// GS_BFLY64: Gentleman–Sande butterfly on X, Y ∈ [0, 2q).
#define GS_BFLY64(X, Y, W, WS, WSH, D, T) \
	VPADDQ  Z30, X, D;         \
	VPSUBQ  Y, D, D;           \
	VPADDQ  Y, X, X;           \
	VPSUBQ  Z30, X, T;         \
	VPMINUQ T, X, X;           \
	SHOUP64(D, W, WS, WSH, Y)

#define REDUCE2Q(X, T) \
	VPSUBQ  Z30, X, T; \
	VPMINUQ T, X, X

// SETUP_Q64: builds Z29..Z31 from the modulus in AX; clobbers BX.
#define SETUP_Q64 \
	VPBROADCASTQ AX, Z31;       \
	VPADDQ       Z31, Z31, Z30; \
	MOVQ         $0xffffffff, BX; \
	VPBROADCASTQ BX, Z29

// func fwdStage64(dst, src *uint64, n, t int, w, ws *uint64, q uint64)
// One forward stage with butterfly distance t (a multiple of 8) reading src
// and writing dst (which may be src): block i of the n/(2t) blocks uses
// w[i], ws[i].
TEXT ·fwdStage64(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ t+24(FP), DX
	MOVQ w+32(FP), R8
	MOVQ ws+40(FP), R9
	MOVQ q+48(FP), AX
	SETUP_Q64
	SHLQ $3, DX
	SHLQ $3, CX
	LEAQ (DI)(DX*1), R13
	LEAQ (SI)(DX*1), R12
	XORQ R11, R11

fwdBlock:
	VPBROADCASTQ (R8), Z4
	VPBROADCASTQ (R9), Z5
	VPSRLQ       $32, Z5, Z9
	ADDQ         $8, R8
	ADDQ         $8, R9
	LEAQ         (R11)(DX*1), R10

fwdInner:
	VMOVDQU64 (SI)(R11*1), Z0
	VMOVDQU64 (R12)(R11*1), Z1
	CT_BFLY64(Z0, Z1, Z4, Z5, Z9, Z6, Z8)
	VMOVDQU64 Z0, (DI)(R11*1)
	VMOVDQU64 Z1, (R13)(R11*1)
	ADDQ      $64, R11
	CMPQ      R11, R10
	JB        fwdInner

	ADDQ DX, R11
	CMPQ R11, CX
	JB   fwdBlock
	VZEROUPPER
	RET

// func fwdLast3_64(a *uint64, n int, r4, r4s, t2, t2s, t1, t1s *uint64, q, red uint64)
// The forward stages t = 4, 2, 1 merged in registers, 16 coefficients (two
// groups A, B of 8) at a time; outputs reduced to [0, red) (red = q or 2q).
// Inside a chunk, P_k = [A_k, B_k] (one 128-bit lane). r4 = Roots[n/8:],
// t2 and t1 are the permuted copies of Roots[n/4:n/2] and Roots[n/2:n]
// (see innerTwiddles2 and innerTwiddles1), with their Shoup companions.
TEXT ·fwdLast3_64(SB), NOSPLIT, $0-80
	MOVQ a+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ r4+16(FP), R8
	MOVQ r4s+24(FP), R9
	MOVQ t2+32(FP), R12
	MOVQ t2s+40(FP), R13
	MOVQ t1+48(FP), R14
	MOVQ t1s+56(FP), R11
	MOVQ q+64(FP), AX
	SETUP_Q64
	VPBROADCASTQ red+72(FP), Z22
	MOVQ         $0xf0, BX
	KMOVW        BX, K1
	VMOVDQU64    permLo<>(SB), Z27
	VMOVDQU64    permHi<>(SB), Z26
	VMOVDQU64    permL1X<>(SB), Z25
	VMOVDQU64    permL1Y<>(SB), Z24
	LEAQ         (DI)(CX*8), R10

fwdL3Loop:
	VMOVDQU64 (DI), Z0
	VMOVDQU64 64(DI), Z1

	// t = 4: X = [P0 P1 P2 P3], Y = [P4 P5 P6 P7].
	VMOVDQA64       Z0, Z2
	VPERMT2Q        Z1, Z27, Z2
	VPERMT2Q        Z1, Z26, Z0
	VBROADCASTI64X2 (R8), Z4
	VBROADCASTI64X2 (R9), Z5
	VPSRLQ $32, Z5, Z9
	CT_BFLY64(Z2, Z0, Z4, Z5, Z9, Z6, Z8)

	// t = 2: X = [P0 P1 P4 P5], Y = [P2 P3 P6 P7].
	VSHUFI64X2      $0x44, Z0, Z2, Z1
	VSHUFI64X2      $0xee, Z0, Z2, Z3
	VBROADCASTI64X2 (R12), Z4
	VBROADCASTI64X2 16(R12), K1, Z4
	VBROADCASTI64X2 (R13), Z5
	VBROADCASTI64X2 16(R13), K1, Z5
	VPSRLQ $32, Z5, Z9
	CT_BFLY64(Z1, Z3, Z4, Z5, Z9, Z6, Z8)

	// t = 1: X = [P0 P4 P2 P6], Y = [P1 P5 P3 P7].
	VSHUFI64X2 $0x88, Z3, Z1, Z0
	VSHUFI64X2 $0xdd, Z3, Z1, Z2
	VMOVDQU64  (R14), Z4
	VMOVDQU64  (R11), Z5
	VPSRLQ $32, Z5, Z9
	CT_BFLY64(Z0, Z2, Z4, Z5, Z9, Z6, Z8)
	REDUCE2Q(Z0, Z6)
	REDUCE2Q(Z2, Z7)
	VPSUBQ     Z22, Z0, Z6
	VPMINUQ    Z6, Z0, Z0
	VPSUBQ     Z22, Z2, Z7
	VPMINUQ    Z7, Z2, Z2

	// Back to A, B.
	VMOVDQA64 Z0, Z1
	VPERMT2Q  Z2, Z25, Z1
	VPERMT2Q  Z2, Z24, Z0
	VMOVDQU64 Z1, (DI)
	VMOVDQU64 Z0, 64(DI)

	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $64, R14
	ADDQ $64, R11
	ADDQ $128, DI
	CMPQ DI, R10
	JB   fwdL3Loop
	VZEROUPPER
	RET

// func invFirst3_64(dst, src *uint64, n int, t1, t1s, t2, t2s, r4, r4s *uint64, q uint64)
// The inverse stages t = 1, 2, 4 merged in registers (Gentleman–Sande),
// reading src and writing dst. t1, t2 are the permuted copies of
// RootsInv[n/2:n] and RootsInv[n/4:n/2], r4 = RootsInv[n/8:].
// Inputs in [0, 4q) (first reduced to [0, 2q)), outputs in [0, 2q).
TEXT ·invFirst3_64(SB), NOSPLIT, $0-80
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ t1+24(FP), R14
	MOVQ t1s+32(FP), R11
	MOVQ t2+40(FP), R12
	MOVQ t2s+48(FP), R13
	MOVQ r4+56(FP), R8
	MOVQ r4s+64(FP), R9
	MOVQ q+72(FP), AX
	SETUP_Q64
	VMOVDQU64 permL1X<>(SB), Z25
	VMOVDQU64 permL1Y<>(SB), Z24
	VMOVDQU64 permEven<>(SB), Z23
	VMOVDQU64 permOdd<>(SB), Z21
	LEAQ      (DI)(CX*8), R10

invF3Loop:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	REDUCE2Q(Z0, Z6)
	REDUCE2Q(Z1, Z7)

	// t = 1: X = [P0 P4 P2 P6], Y = [P1 P5 P3 P7].
	VMOVDQA64 Z0, Z2
	VPERMT2Q  Z1, Z25, Z2
	VPERMT2Q  Z1, Z24, Z0
	VMOVDQU64 (R14), Z4
	VMOVDQU64 (R11), Z5
	VPSRLQ $32, Z5, Z9
	GS_BFLY64(Z2, Z0, Z4, Z5, Z9, Z6, Z7)

	// t = 2: X = [P0 P4 P1 P5], Y = [P2 P6 P3 P7].
	VSHUFI64X2      $0x44, Z0, Z2, Z1
	VSHUFI64X2      $0xee, Z0, Z2, Z3
	VBROADCASTI64X4 (R12), Z4
	VBROADCASTI64X4 (R13), Z5
	VPSRLQ $32, Z5, Z9
	GS_BFLY64(Z1, Z3, Z4, Z5, Z9, Z6, Z7)

	// t = 4: X = [P0 P1 P2 P3], Y = [P4 P5 P6 P7].
	VSHUFI64X2      $0x88, Z3, Z1, Z0
	VSHUFI64X2      $0xdd, Z3, Z1, Z2
	VBROADCASTI64X2 (R8), Z4
	VBROADCASTI64X2 (R9), Z5
	VPSRLQ $32, Z5, Z9
	GS_BFLY64(Z0, Z2, Z4, Z5, Z9, Z6, Z7)

	// Back to A, B.
	VMOVDQA64 Z0, Z1
	VPERMT2Q  Z2, Z23, Z1
	VPERMT2Q  Z2, Z21, Z0
	VMOVDQU64 Z1, (DI)
	VMOVDQU64 Z0, 64(DI)

	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $64, R14
	ADDQ $64, R11
	ADDQ $128, SI
	ADDQ $128, DI
	CMPQ DI, R10
	JB   invF3Loop
	VZEROUPPER
	RET

// func invStage64(a *uint64, n, t int, w, ws *uint64, q uint64)
// One inverse stage with butterfly distance t (a multiple of 8), in place.
TEXT ·invStage64(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ t+16(FP), DX
	MOVQ w+24(FP), R8
	MOVQ ws+32(FP), R9
	MOVQ q+40(FP), AX
	SETUP_Q64
	SHLQ $3, DX
	LEAQ (DI)(CX*8), R10

invBlock:
	VPBROADCASTQ (R8), Z4
	VPBROADCASTQ (R9), Z5
	VPSRLQ       $32, Z5, Z9
	ADDQ         $8, R8
	ADDQ         $8, R9
	LEAQ         (DI)(DX*1), R11
	MOVQ         DI, SI

invInner:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 (SI)(DX*1), Z1
	GS_BFLY64(Z0, Z1, Z4, Z5, Z9, Z6, Z7)
	VMOVDQU64 Z0, (SI)
	VMOVDQU64 Z1, (SI)(DX*1)
	ADDQ      $64, SI
	CMPQ      SI, R11
	JB        invInner

	LEAQ (R11)(DX*1), DI
	CMPQ DI, R10
	JB   invBlock
	VZEROUPPER
	RET

// func invLast64(a *uint64, n int, w, ws, ni, nis, q, red uint64)
// The last inverse stage (t = n/2, one block) fused with the scaling by
// n^{-1}: X ← (X + Y)·ni, Y ← (X + 2q − Y)·w with w = RootsInv[1]·n^{-1};
// outputs reduced to [0, red) (red = q or 2q).
TEXT ·invLast64(SB), NOSPLIT, $0-64
	MOVQ         a+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         q+48(FP), AX
	SETUP_Q64
	VPBROADCASTQ w+16(FP), Z4
	VPBROADCASTQ ws+24(FP), Z5
	VPSRLQ       $32, Z5, Z9
	VPBROADCASTQ ni+32(FP), Z12
	VPBROADCASTQ nis+40(FP), Z13
	VPSRLQ       $32, Z13, Z14
	VPBROADCASTQ red+56(FP), Z22
	SHLQ         $2, CX
	LEAQ         (DI)(CX*1), R11

invLastLoop:
	VMOVDQU64 (DI), Z0
	VMOVDQU64 (DI)(CX*1), Z1
	VPADDQ    Z1, Z0, Z2
	VPADDQ    Z30, Z0, Z3
	VPSUBQ    Z1, Z3, Z3
	SHOUP64(Z2, Z12, Z13, Z14, Z0)
	SHOUP64(Z3, Z4, Z5, Z9, Z1)
	VPSUBQ    Z22, Z0, Z6
	VPMINUQ   Z6, Z0, Z0
	VPSUBQ    Z22, Z1, Z7
	VPMINUQ   Z7, Z1, Z1
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, (DI)(CX*1)
	ADDQ      $64, DI
	CMPQ      DI, R11
	JB        invLastLoop
	VZEROUPPER
	RET

// Lane permutations (VPERMT2Q indices: 0-7 first table, 8-15 second).
DATA permLo<>+0(SB)/8, $0
DATA permLo<>+8(SB)/8, $8
DATA permLo<>+16(SB)/8, $1
DATA permLo<>+24(SB)/8, $9
DATA permLo<>+32(SB)/8, $2
DATA permLo<>+40(SB)/8, $10
DATA permLo<>+48(SB)/8, $3
DATA permLo<>+56(SB)/8, $11
GLOBL permLo<>(SB), RODATA|NOPTR, $64

DATA permHi<>+0(SB)/8, $4
DATA permHi<>+8(SB)/8, $12
DATA permHi<>+16(SB)/8, $5
DATA permHi<>+24(SB)/8, $13
DATA permHi<>+32(SB)/8, $6
DATA permHi<>+40(SB)/8, $14
DATA permHi<>+48(SB)/8, $7
DATA permHi<>+56(SB)/8, $15
GLOBL permHi<>(SB), RODATA|NOPTR, $64

DATA permL1X<>+0(SB)/8, $0
DATA permL1X<>+8(SB)/8, $8
DATA permL1X<>+16(SB)/8, $4
DATA permL1X<>+24(SB)/8, $12
DATA permL1X<>+32(SB)/8, $2
DATA permL1X<>+40(SB)/8, $10
DATA permL1X<>+48(SB)/8, $6
DATA permL1X<>+56(SB)/8, $14
GLOBL permL1X<>(SB), RODATA|NOPTR, $64

DATA permL1Y<>+0(SB)/8, $1
DATA permL1Y<>+8(SB)/8, $9
DATA permL1Y<>+16(SB)/8, $5
DATA permL1Y<>+24(SB)/8, $13
DATA permL1Y<>+32(SB)/8, $3
DATA permL1Y<>+40(SB)/8, $11
DATA permL1Y<>+48(SB)/8, $7
DATA permL1Y<>+56(SB)/8, $15
GLOBL permL1Y<>(SB), RODATA|NOPTR, $64

DATA permEven<>+0(SB)/8, $0
DATA permEven<>+8(SB)/8, $2
DATA permEven<>+16(SB)/8, $4
DATA permEven<>+24(SB)/8, $6
DATA permEven<>+32(SB)/8, $8
DATA permEven<>+40(SB)/8, $10
DATA permEven<>+48(SB)/8, $12
DATA permEven<>+56(SB)/8, $14
GLOBL permEven<>(SB), RODATA|NOPTR, $64

DATA permOdd<>+0(SB)/8, $1
DATA permOdd<>+8(SB)/8, $3
DATA permOdd<>+16(SB)/8, $5
DATA permOdd<>+24(SB)/8, $7
DATA permOdd<>+32(SB)/8, $9
DATA permOdd<>+40(SB)/8, $11
DATA permOdd<>+48(SB)/8, $13
DATA permOdd<>+56(SB)/8, $15
GLOBL permOdd<>(SB), RODATA|NOPTR, $64
