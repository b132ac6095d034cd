//go:build amd64 && !purego

#include "textflag.h"

// IFMA52 NTT kernels for primes q < 2^50 (see ntt_amd64.go for the layout).
//
// Register conventions inside every kernel:
//   Z31 = q, Z30 = 2q, Z29 = 2^52 − q, Z28 = 2^52 − 1 (broadcast).
//
// Shoup multiplication in 52-bit arithmetic: for x < 2^52, w < q and
// ws = ⌊w·2^52/q⌋, h = ⌊x·ws/2^52⌋ (VPMADD52HUQ) and
// r = (x·w + h·(2^52−q)) mod 2^52 = x·w − h·q ∈ [0, 2q).

// SHOUP52 sets OUT = X·W mod q in [0, 2q); H is clobbered.
#define SHOUP52(X, W, WS, H, OUT) \
	VPXORQ      H, H, H;     \
	VPMADD52HUQ WS, X, H;    \
	VPXORQ      OUT, OUT, OUT; \
	VPMADD52LUQ W, X, OUT;   \
	VPMADD52LUQ Z29, H, OUT; \
	VPANDQ      Z28, OUT, OUT

// CT_BFLY: Cooley–Tukey butterfly on X, Y ∈ [0, 4q):
// X ← (X mod 2q) + Y·W, Y ← (X mod 2q) + 2q − Y·W, both in [0, 4q).
#define CT_BFLY(X, Y, W, WS, T, H, V) \
	VPSUBQ  Z30, X, T;   \
	VPMINUQ T, X, X;     \
	SHOUP52(Y, W, WS, H, V); \
	VPADDQ  Z30, X, T;   \
	VPADDQ  V, X, X;     \
	VPSUBQ  V, T, Y

// GS_BFLY: Gentleman–Sande butterfly on X, Y ∈ [0, 2q):
// X ← X + Y mod 2q, Y ← (X + 2q − Y)·W, both in [0, 2q).
#define GS_BFLY(X, Y, W, WS, D, T, H) \
	VPADDQ  Z30, X, D;   \
	VPSUBQ  Y, D, D;     \
	VPADDQ  Y, X, X;     \
	VPSUBQ  Z30, X, T;   \
	VPMINUQ T, X, X;     \
	SHOUP52(D, W, WS, H, Y)

// REDUCE2Q: X ← X mod 2q for X ∈ [0, 4q).
#define REDUCE2Q(X, T) \
	VPSUBQ  Z30, X, T; \
	VPMINUQ T, X, X

// SETUP_Q: builds Z28..Z31 from the modulus in AX; clobbers BX.
#define SETUP_Q \
	VPBROADCASTQ AX, Z31;           \
	VPADDQ       Z31, Z31, Z30;     \
	MOVQ         $0x10000000000000, BX; \
	SUBQ         AX, BX;            \
	VPBROADCASTQ BX, Z29;           \
	MOVQ         $0xfffffffffffff, BX; \
	VPBROADCASTQ BX, Z28

// func fwdStageIFMA(dst, src *uint64, n, t int, w, ws *uint64, q uint64)
// One forward stage with butterfly distance t (a multiple of 8) reading src
// and writing dst (which may be src): block i of the n/(2t) blocks uses
// w[i], ws[i].
TEXT ·fwdStageIFMA(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ t+24(FP), DX
	MOVQ w+32(FP), R8
	MOVQ ws+40(FP), R9
	MOVQ q+48(FP), AX
	SETUP_Q
	SHLQ $3, DX
	SHLQ $3, CX
	LEAQ (DI)(DX*1), R13
	LEAQ (SI)(DX*1), R12
	XORQ R11, R11

fwdBlock:
	VPBROADCASTQ (R8), Z4
	VPBROADCASTQ (R9), Z5
	ADDQ         $8, R8
	ADDQ         $8, R9
	LEAQ         (R11)(DX*1), R10

fwdInner:
	VMOVDQU64 (SI)(R11*1), Z0
	VMOVDQU64 (R12)(R11*1), Z1
	CT_BFLY(Z0, Z1, Z4, Z5, Z6, Z7, Z8)
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

// func fwdRadix4IFMA(a *uint64, n, t int, w1, ws1, w2, ws2 *uint64, q uint64)
// Two forward stages in one pass, in place: distance t (t ≥ 16) with
// twiddles w1[i] for block i, then distance t/2 with w2[2i], w2[2i+1].
TEXT ·fwdRadix4IFMA(SB), NOSPLIT, $0-64
	MOVQ a+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ t+16(FP), DX
	MOVQ w1+24(FP), R8
	MOVQ ws1+32(FP), R9
	MOVQ w2+40(FP), R12
	MOVQ ws2+48(FP), R13
	MOVQ q+56(FP), AX
	SETUP_Q
	SHLQ $2, DX
	SHLQ $3, CX
	LEAQ (DI)(DX*1), SI
	LEAQ (SI)(DX*1), BX
	LEAQ (BX)(DX*1), AX
	XORQ R14, R14

fwdR4Block:
	VPBROADCASTQ (R8), Z4
	VPBROADCASTQ (R9), Z5
	VPBROADCASTQ (R12), Z10
	VPBROADCASTQ (R13), Z11
	VPBROADCASTQ 8(R12), Z12
	VPBROADCASTQ 8(R13), Z13
	ADDQ         $8, R8
	ADDQ         $8, R9
	ADDQ         $16, R12
	ADDQ         $16, R13
	MOVQ         R14, R11
	LEAQ         (R14)(DX*1), R10

fwdR4Inner:
	VMOVDQU64 (DI)(R11*1), Z0
	VMOVDQU64 (SI)(R11*1), Z1
	VMOVDQU64 (BX)(R11*1), Z2
	VMOVDQU64 (AX)(R11*1), Z3
	CT_BFLY(Z0, Z2, Z4, Z5, Z6, Z7, Z8)
	CT_BFLY(Z1, Z3, Z4, Z5, Z14, Z15, Z16)
	CT_BFLY(Z0, Z1, Z10, Z11, Z6, Z7, Z8)
	CT_BFLY(Z2, Z3, Z12, Z13, Z14, Z15, Z16)
	VMOVDQU64 Z0, (DI)(R11*1)
	VMOVDQU64 Z1, (SI)(R11*1)
	VMOVDQU64 Z2, (BX)(R11*1)
	VMOVDQU64 Z3, (AX)(R11*1)
	ADDQ      $64, R11
	CMPQ      R11, R10
	JB        fwdR4Inner

	LEAQ (R14)(DX*4), R14
	CMPQ R14, CX
	JB   fwdR4Block
	VZEROUPPER
	RET

// func invRadix4IFMA(a *uint64, n, s int, w1, ws1, w2, ws2 *uint64, q uint64)
// Two inverse stages in one pass, in place: distance s (s ≥ 8) with
// twiddles w1[2i], w1[2i+1] for the two halves of block i, then distance 2s
// with w2[i].
TEXT ·invRadix4IFMA(SB), NOSPLIT, $0-64
	MOVQ a+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ s+16(FP), DX
	MOVQ w1+24(FP), R8
	MOVQ ws1+32(FP), R9
	MOVQ w2+40(FP), R12
	MOVQ ws2+48(FP), R13
	MOVQ q+56(FP), AX
	SETUP_Q
	SHLQ $3, DX
	SHLQ $3, CX
	LEAQ (DI)(DX*1), SI
	LEAQ (SI)(DX*1), BX
	LEAQ (BX)(DX*1), AX
	XORQ R14, R14

invR4Block:
	VPBROADCASTQ (R8), Z4
	VPBROADCASTQ (R9), Z5
	VPBROADCASTQ 8(R8), Z12
	VPBROADCASTQ 8(R9), Z13
	VPBROADCASTQ (R12), Z10
	VPBROADCASTQ (R13), Z11
	ADDQ         $16, R8
	ADDQ         $16, R9
	ADDQ         $8, R12
	ADDQ         $8, R13
	MOVQ         R14, R11
	LEAQ         (R14)(DX*1), R10

invR4Inner:
	VMOVDQU64 (DI)(R11*1), Z0
	VMOVDQU64 (SI)(R11*1), Z1
	VMOVDQU64 (BX)(R11*1), Z2
	VMOVDQU64 (AX)(R11*1), Z3
	GS_BFLY(Z0, Z1, Z4, Z5, Z6, Z7, Z8)
	GS_BFLY(Z2, Z3, Z12, Z13, Z14, Z15, Z16)
	GS_BFLY(Z0, Z2, Z10, Z11, Z6, Z7, Z8)
	GS_BFLY(Z1, Z3, Z10, Z11, Z14, Z15, Z16)
	VMOVDQU64 Z0, (DI)(R11*1)
	VMOVDQU64 Z1, (SI)(R11*1)
	VMOVDQU64 Z2, (BX)(R11*1)
	VMOVDQU64 Z3, (AX)(R11*1)
	ADDQ      $64, R11
	CMPQ      R11, R10
	JB        invR4Inner

	LEAQ (R14)(DX*4), R14
	CMPQ R14, CX
	JB   invR4Block
	VZEROUPPER
	RET

// func fwdLast3IFMA(a *uint64, n int, r4, r4s, t2, t2s, t1, t1s *uint64, q, red uint64)
// The forward stages t = 4, 2, 1 merged in registers, 16 coefficients (two
// groups A, B of 8) at a time; outputs reduced to [0, red) (red = q or 2q).
// Inside a chunk, P_k = [A_k, B_k] (one 128-bit lane). r4 = Roots[n/8:],
// t2 and t1 are the permuted copies of Roots[n/4:n/2] and Roots[n/2:n]
// (see innerTwiddles2 and innerTwiddles1), with their Shoup companions.
TEXT ·fwdLast3IFMA(SB), NOSPLIT, $0-80
	MOVQ a+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ r4+16(FP), R8
	MOVQ r4s+24(FP), R9
	MOVQ t2+32(FP), R12
	MOVQ t2s+40(FP), R13
	MOVQ t1+48(FP), R14
	MOVQ t1s+56(FP), R11
	MOVQ q+64(FP), AX
	SETUP_Q
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
	CT_BFLY(Z2, Z0, Z4, Z5, Z6, Z7, Z8)

	// t = 2: X = [P0 P1 P4 P5], Y = [P2 P3 P6 P7].
	VSHUFI64X2      $0x44, Z0, Z2, Z1
	VSHUFI64X2      $0xee, Z0, Z2, Z3
	VBROADCASTI64X2 (R12), Z4
	VBROADCASTI64X2 16(R12), K1, Z4
	VBROADCASTI64X2 (R13), Z5
	VBROADCASTI64X2 16(R13), K1, Z5
	CT_BFLY(Z1, Z3, Z4, Z5, Z6, Z7, Z8)

	// t = 1: X = [P0 P4 P2 P6], Y = [P1 P5 P3 P7].
	VSHUFI64X2 $0x88, Z3, Z1, Z0
	VSHUFI64X2 $0xdd, Z3, Z1, Z2
	VMOVDQU64  (R14), Z4
	VMOVDQU64  (R11), Z5
	CT_BFLY(Z0, Z2, Z4, Z5, Z6, Z7, Z8)
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

// func invFirst3IFMA(dst, src *uint64, n int, t1, t1s, t2, t2s, r4, r4s *uint64, q uint64)
// The inverse stages t = 1, 2, 4 merged in registers (Gentleman–Sande),
// reading src and writing dst. t1, t2 are the permuted copies of
// RootsInv[n/2:n] and RootsInv[n/4:n/2], r4 = RootsInv[n/8:].
// Inputs in [0, 4q) (first reduced to [0, 2q)), outputs in [0, 2q).
TEXT ·invFirst3IFMA(SB), NOSPLIT, $0-80
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
	SETUP_Q
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
	GS_BFLY(Z2, Z0, Z4, Z5, Z6, Z7, Z8)

	// t = 2: X = [P0 P4 P1 P5], Y = [P2 P6 P3 P7].
	VSHUFI64X2      $0x44, Z0, Z2, Z1
	VSHUFI64X2      $0xee, Z0, Z2, Z3
	VBROADCASTI64X4 (R12), Z4
	VBROADCASTI64X4 (R13), Z5
	GS_BFLY(Z1, Z3, Z4, Z5, Z6, Z7, Z8)

	// t = 4: X = [P0 P1 P2 P3], Y = [P4 P5 P6 P7].
	VSHUFI64X2      $0x88, Z3, Z1, Z0
	VSHUFI64X2      $0xdd, Z3, Z1, Z2
	VBROADCASTI64X2 (R8), Z4
	VBROADCASTI64X2 (R9), Z5
	GS_BFLY(Z0, Z2, Z4, Z5, Z6, Z7, Z8)

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

// func invStageIFMA(a *uint64, n, t int, w, ws *uint64, q uint64)
// One inverse stage with butterfly distance t (a multiple of 8), in place.
TEXT ·invStageIFMA(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ t+16(FP), DX
	MOVQ w+24(FP), R8
	MOVQ ws+32(FP), R9
	MOVQ q+40(FP), AX
	SETUP_Q
	SHLQ $3, DX
	LEAQ (DI)(CX*8), R10

invBlock:
	VPBROADCASTQ (R8), Z4
	VPBROADCASTQ (R9), Z5
	ADDQ         $8, R8
	ADDQ         $8, R9
	LEAQ         (DI)(DX*1), R11
	MOVQ         DI, SI

invInner:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 (SI)(DX*1), Z1
	GS_BFLY(Z0, Z1, Z4, Z5, Z6, Z7, Z8)
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

// func invLastIFMA(a *uint64, n int, w, ws, ni, nis, q, red uint64)
// The last inverse stage (t = n/2, one block) fused with the scaling by
// n^{-1}: X ← (X + Y)·ni, Y ← (X + 2q − Y)·w with w = RootsInv[1]·n^{-1};
// outputs reduced to [0, red) (red = q or 2q).
TEXT ·invLastIFMA(SB), NOSPLIT, $0-64
	MOVQ         a+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         q+48(FP), AX
	SETUP_Q
	VPBROADCASTQ w+16(FP), Z4
	VPBROADCASTQ ws+24(FP), Z5
	VPBROADCASTQ ni+32(FP), Z12
	VPBROADCASTQ nis+40(FP), Z13
	VPBROADCASTQ red+56(FP), Z22
	SHLQ         $2, CX
	LEAQ         (DI)(CX*1), R11

invLastLoop:
	VMOVDQU64 (DI), Z0
	VMOVDQU64 (DI)(CX*1), Z1
	VPADDQ    Z1, Z0, Z2
	VPADDQ    Z30, Z0, Z3
	VPSUBQ    Z1, Z3, Z3
	SHOUP52(Z2, Z12, Z13, Z6, Z0)
	SHOUP52(Z3, Z4, Z5, Z7, Z1)
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
