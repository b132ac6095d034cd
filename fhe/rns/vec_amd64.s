//go:build amd64 && !purego

#include "textflag.h"

// Element-wise kernels over n words, n a multiple of 8 (the Go wrappers in
// asm_amd64.go handle the tail).

// func addVec(a, b, out *uint64, n int, q uint64)
// out = a + b, minus q when the (wrapping) sum is ≥ q: min(s, s − q) is the
// same choice for every 64-bit input.
TEXT ·addVec(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), SI
	MOVQ         b+8(FP), DX
	MOVQ         out+16(FP), DI
	MOVQ         n+24(FP), CX
	VPBROADCASTQ q+32(FP), Z31
	XORQ         AX, AX

addLoop:
	VMOVDQU64 (SI)(AX*8), Z0
	VPADDQ    (DX)(AX*8), Z0, Z0
	VPSUBQ    Z31, Z0, Z1
	VPMINUQ   Z1, Z0, Z0
	VMOVDQU64 Z0, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        addLoop
	VZEROUPPER
	RET

// func subVec(a, b, out *uint64, n int, q uint64)
// out = a + q − b, minus q when that is ≥ q.
TEXT ·subVec(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), SI
	MOVQ         b+8(FP), DX
	MOVQ         out+16(FP), DI
	MOVQ         n+24(FP), CX
	VPBROADCASTQ q+32(FP), Z31
	XORQ         AX, AX

subLoop:
	VMOVDQU64 (SI)(AX*8), Z0
	VPADDQ    Z31, Z0, Z0
	VPSUBQ    (DX)(AX*8), Z0, Z0
	VPSUBQ    Z31, Z0, Z1
	VPMINUQ   Z1, Z0, Z0
	VMOVDQU64 Z0, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        subLoop
	VZEROUPPER
	RET

// MONT52(A, B, OUT): OUT = A·B·2^-64 mod q in [0, q) for A·B < q·2^52.
// Montgomery reduction in radix 2^52 (Z27 = q^-1 mod 2^52): with P = A·B =
// hi·2^52 + lo and m = lo·q^-1 mod 2^52, P − m·q = (hi − ⌊m·q/2^52⌋)·2^52
// exactly, so r = hi − ⌊m·q/2^52⌋ + q ∈ (0, 2q) is P·2^-52 (mod q). Then a
// 52-bit Shoup multiplication by Z26 = 2^-12 mod q (Z25 its companion) and a
// conditional subtraction give the canonical P·2^-64 mod q.
#define MONT52(A, B, OUT) \
	VPXORQ      Z2, Z2, Z2;   \
	VPMADD52LUQ B, A, Z2;     \
	VPXORQ      Z3, Z3, Z3;   \
	VPMADD52HUQ B, A, Z3;     \
	VPXORQ      Z4, Z4, Z4;   \
	VPMADD52LUQ Z27, Z2, Z4;  \
	VPXORQ      Z5, Z5, Z5;   \
	VPMADD52HUQ Z31, Z4, Z5;  \
	VPSUBQ      Z5, Z3, Z3;   \
	VPADDQ      Z31, Z3, Z3;  \
	VPXORQ      Z6, Z6, Z6;   \
	VPMADD52HUQ Z25, Z3, Z6;  \
	VPXORQ      OUT, OUT, OUT; \
	VPMADD52LUQ Z26, Z3, OUT; \
	VPMADD52LUQ Z29, Z6, OUT; \
	VPANDQ      Z28, OUT, OUT; \
	VPSUBQ      Z31, OUT, Z8; \
	VPMINUQ     Z8, OUT, OUT

// MONT_SETUP: q in AX, q^-1 mod 2^52 in R8, k in R9, its companion in R10.
#define MONT_SETUP \
	VPBROADCASTQ AX, Z31;               \
	MOVQ         $0x10000000000000, BX; \
	SUBQ         AX, BX;                \
	VPBROADCASTQ BX, Z29;               \
	MOVQ         $0xfffffffffffff, BX;  \
	VPBROADCASTQ BX, Z28;               \
	VPBROADCASTQ R8, Z27;               \
	VPBROADCASTQ R9, Z26;               \
	VPBROADCASTQ R10, Z25

// func mulMontVec(a, b, out *uint64, n int, q, qinv, k, ks uint64)
TEXT ·mulMontVec(SB), NOSPLIT, $0-64
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ q+32(FP), AX
	MOVQ qinv+40(FP), R8
	MOVQ k+48(FP), R9
	MOVQ ks+56(FP), R10
	MONT_SETUP
	XORQ AX, AX

mulLoop:
	VMOVDQU64 (SI)(AX*8), Z0
	VMOVDQU64 (DX)(AX*8), Z1
	MONT52(Z0, Z1, Z7)
	VMOVDQU64 Z7, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        mulLoop
	VZEROUPPER
	RET

// func macMontVec(a, b, acc *uint64, n int, q, qinv, k, ks uint64)
// acc = acc + a·b·2^-64 mod q.
TEXT ·macMontVec(SB), NOSPLIT, $0-64
	MOVQ acc+16(FP), DI
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ n+24(FP), CX
	MOVQ q+32(FP), AX
	MOVQ qinv+40(FP), R8
	MOVQ k+48(FP), R9
	MOVQ ks+56(FP), R10
	MONT_SETUP
	XORQ AX, AX

macLoop:
	VMOVDQU64 (SI)(AX*8), Z0
	VMOVDQU64 (DX)(AX*8), Z1
	MONT52(Z0, Z1, Z7)
	VPADDQ    (DI)(AX*8), Z7, Z7
	VPSUBQ    Z31, Z7, Z8
	VPMINUQ   Z8, Z7, Z7
	VMOVDQU64 Z7, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        macLoop
	VZEROUPPER
	RET

// func gatherVec(in, out *uint64, index *uint32, n int, last uint32) uint32
// out[i] = in[min(index[i], last)] for i < n; returns the largest index seen
// so that the caller can reject out-of-range indices (memory stays safe:
// every load is clamped to in[0:last+1]).
TEXT ·gatherVec(SB), NOSPLIT, $0-44
	MOVQ         in+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         index+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVL         last+32(FP), BX
	VPBROADCASTD BX, Y31
	VPXORD       Y30, Y30, Y30
	MOVQ         $0xff, BX
	XORQ         AX, AX

gatherLoop:
	VMOVDQU32  (DX)(AX*4), Y1
	VPMAXUD    Y1, Y30, Y30
	VPMINUD    Y31, Y1, Y1
	KMOVW      BX, K1
	VPGATHERDQ (SI)(Y1*8), K1, Z0
	VMOVDQU64  Z0, (DI)(AX*8)
	ADDQ       $8, AX
	CMPQ       AX, CX
	JB         gatherLoop

	// Horizontal maximum of Y30.
	VEXTRACTI32X4 $1, Y30, X1
	VPMAXUD       X1, X30, X30
	VPSHUFD       $0x4e, X30, X1
	VPMAXUD       X1, X30, X30
	VPSHUFD       $0xb1, X30, X1
	VPMAXUD       X1, X30, X30
	VMOVD         X30, AX
	MOVL          AX, ret+40(FP)
	VZEROUPPER
	RET

// func permuteBlocksVec(in, out *uint64, index *uint32, n int, lastBlock uint64) (spill, max uint64)
// out[8b+o] = in[base_b + index[8b+o] mod 8] with base_b = index[8b] &^ 7
// clamped to lastBlock (the start of the last full block of in): one VPERMQ
// per 8 outputs. This equals out[i] = in[index[i]] exactly when every block
// of 8 indices stays inside one aligned block of 8 (automorphism tables in
// the bit-reversed NTT layout do), which the caller checks with spill (the
// OR of index ^ base over all i; zero except in bits 0-2 when it holds) and
// max (the largest index).
TEXT ·permuteBlocksVec(SB), NOSPLIT, $0-56
	MOVQ    in+0(FP), SI
	MOVQ    out+8(FP), DI
	MOVQ    index+16(FP), DX
	MOVQ    n+24(FP), CX
	MOVQ    lastBlock+32(FP), R8
	VPXORQ  Z9, Z9, Z9
	VPXORQ  Z10, Z10, Z10
	XORQ    AX, AX

permLoop:
	VPMOVZXDQ    (DX)(AX*4), Z1
	MOVL         (DX)(AX*4), BX
	ANDQ         $-8, BX
	VPBROADCASTQ BX, Z2
	CMPQ         BX, R8
	CMOVQHI      R8, BX
	VPERMQ       (SI)(BX*8), Z1, Z0
	VMOVDQU64    Z0, (DI)(AX*8)
	VPXORQ       Z2, Z1, Z3
	VPORQ        Z3, Z9, Z9
	VPMAXUQ      Z1, Z10, Z10
	ADDQ         $8, AX
	CMPQ         AX, CX
	JB           permLoop

	// Horizontal OR of Z9 and maximum of Z10.
	VEXTRACTI64X4 $1, Z9, Y1
	VPORQ         Y1, Y9, Y9
	VEXTRACTI64X2 $1, Y9, X1
	VPORQ         X1, X9, X9
	VPSHUFD       $0x4e, X9, X1
	VPORQ         X1, X9, X9
	VMOVQ         X9, AX
	MOVQ          AX, spill+40(FP)
	VEXTRACTI64X4 $1, Z10, Y1
	VPMAXUQ       Y1, Y10, Y10
	VEXTRACTI64X2 $1, Y10, X1
	VPMAXUQ       X1, X10, X10
	VPSHUFD       $0x4e, X10, X1
	VPMAXUQ       X1, X10, X10
	VMOVQ         X10, AX
	MOVQ          AX, max+48(FP)
	VZEROUPPER
	RET

// func addScalarVec(a, out *uint64, n int, s, q uint64)
// out = a + s, minus q when the (wrapping) sum is ≥ q (AddScalar; SubScalar
// passes s = q − s, the same wrapping sum a + q − s).
TEXT ·addScalarVec(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ s+24(FP), Z30
	VPBROADCASTQ q+32(FP), Z31
	XORQ         AX, AX

addSLoop:
	VPADDQ    (SI)(AX*8), Z30, Z0
	VPSUBQ    Z31, Z0, Z1
	VPMINUQ   Z1, Z0, Z0
	VMOVDQU64 Z0, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        addSLoop
	VZEROUPPER
	RET

// func negVec(a, out *uint64, n int, q uint64)
// out = q − a, minus q when that is ≥ q.
TEXT ·negVec(SB), NOSPLIT, $0-32
	MOVQ         a+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ q+24(FP), Z31
	XORQ         AX, AX

negLoop:
	VPSUBQ    (SI)(AX*8), Z31, Z0
	VPSUBQ    Z31, Z0, Z1
	VPMINUQ   Z1, Z0, Z0
	VMOVDQU64 Z0, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        negLoop
	VZEROUPPER
	RET

// func mulScalarVec(a, out *uint64, n int, w, ws, q uint64)
// out = a·w mod q in [0, q) for a < 2^52 (52-bit Shoup, ws = ⌊w·2^52/q⌋).
TEXT ·mulScalarVec(SB), NOSPLIT, $0-48
	MOVQ         a+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ w+24(FP), Z26
	VPBROADCASTQ ws+32(FP), Z25
	MOVQ         q+40(FP), AX
	VPBROADCASTQ AX, Z31
	MOVQ         $0x10000000000000, BX
	SUBQ         AX, BX
	VPBROADCASTQ BX, Z29
	MOVQ         $0xfffffffffffff, BX
	VPBROADCASTQ BX, Z28
	XORQ         AX, AX

mulSLoop:
	VMOVDQU64   (SI)(AX*8), Z0
	VPXORQ      Z1, Z1, Z1
	VPMADD52HUQ Z25, Z0, Z1
	VPXORQ      Z2, Z2, Z2
	VPMADD52LUQ Z26, Z0, Z2
	VPMADD52LUQ Z29, Z1, Z2
	VPANDQ      Z28, Z2, Z2
	VPSUBQ      Z31, Z2, Z3
	VPMINUQ     Z3, Z2, Z2
	VMOVDQU64   Z2, (DI)(AX*8)
	ADDQ        $8, AX
	CMPQ        AX, CX
	JB          mulSLoop
	VZEROUPPER
	RET

// MULHI64(X, Y, Y1, OUT): OUT = ⌊X·Y/2^64⌋ from four 32×32-bit products,
// Y1 = Y >> 32, Z29 = 2^32 − 1; Z16–Z19 scratch; OUT ∉ {X, Y, Y1}.
#define MULHI64(X, Y, Y1, OUT) \
	VPSRLQ   $32, X, Z16;   \
	VPMULUDQ Y, X, Z17;     \
	VPMULUDQ Y1, X, Z18;    \
	VPMULUDQ Y, Z16, Z19;   \
	VPMULUDQ Y1, Z16, OUT;  \
	VPSRLQ   $32, Z17, Z17; \
	VPADDQ   Z17, Z19, Z19; \
	VPANDQ   Z29, Z19, Z17; \
	VPADDQ   Z17, Z18, Z18; \
	VPSRLQ   $32, Z19, Z19; \
	VPSRLQ   $32, Z18, Z18; \
	VPADDQ   Z19, OUT, OUT; \
	VPADDQ   Z18, OUT, OUT

// MONT64(A, B, OUT): OUT = MRed(A, B) = A·B·2^-64 mod q in [0, q), the
// operations of mulMontGo on eight lanes: hi:lo = A·B,
// r = hi − ⌊(lo·mr mod 2^64)·q/2^64⌋ + q, minus q if ≥ q.
// Z31 = q, Z28 = q >> 32, Z27 = mr = q^-1 mod 2^64; Z2, Z3, Z5, Z8 scratch.
#define MONT64(A, B, OUT) \
	VPSRLQ  $32, B, Z2;      \
	MULHI64(A, B, Z2, Z3);   \
	VPMULLQ B, A, Z5;        \
	VPMULLQ Z27, Z5, Z5;     \
	MULHI64(Z5, Z31, Z28, OUT); \
	VPSUBQ  OUT, Z3, OUT;    \
	VPADDQ  Z31, OUT, OUT;   \
	VPSUBQ  Z31, OUT, Z8;    \
	VPMINUQ Z8, OUT, OUT

// MONT64_SETUP: q in AX, mr in R8.
#define MONT64_SETUP \
	VPBROADCASTQ AX, Z31;         \
	VPSRLQ       $32, Z31, Z28;   \
	VPBROADCASTQ R8, Z27;         \
	MOVQ         $0xffffffff, BX; \
	VPBROADCASTQ BX, Z29

// func mulMont64Vec(a, b, out *uint64, n int, q, mr uint64)
TEXT ·mulMont64Vec(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ q+32(FP), AX
	MOVQ mr+40(FP), R8
	MONT64_SETUP
	XORQ AX, AX

mul64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	VMOVDQU64 (DX)(AX*8), Z1
	MONT64(Z0, Z1, Z7)
	VMOVDQU64 Z7, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        mul64Loop
	VZEROUPPER
	RET

// func macMont64Vec(a, b, acc *uint64, n int, q, mr uint64)
TEXT ·macMont64Vec(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ acc+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ q+32(FP), AX
	MOVQ mr+40(FP), R8
	MONT64_SETUP
	XORQ AX, AX

mac64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	VMOVDQU64 (DX)(AX*8), Z1
	MONT64(Z0, Z1, Z7)
	VPADDQ    (DI)(AX*8), Z7, Z7
	VPSUBQ    Z31, Z7, Z8
	VPMINUQ   Z8, Z7, Z7
	VMOVDQU64 Z7, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        mac64Loop
	VZEROUPPER
	RET

// func mulScalarMont64Vec(a, out *uint64, n int, s, q, mr uint64)
// out = MRed(a, s) for every lane (MulScalarMont on the AVX-512F path).
TEXT ·mulScalarMont64Vec(SB), NOSPLIT, $0-48
	MOVQ         a+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ s+24(FP), Z1
	MOVQ         q+32(FP), AX
	MOVQ         mr+40(FP), R8
	MONT64_SETUP
	XORQ         AX, AX

mulSM64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	MONT64(Z0, Z1, Z7)
	VMOVDQU64 Z7, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        mulSM64Loop
	VZEROUPPER
	RET

// func mulBarrett64Vec(a, b, out *uint64, n int, q, mr, r2 uint64)
// out = a·b mod q as MRed(MRed(a, b), 2^128 mod q), exact for a·b < q·2^64.
TEXT ·mulBarrett64Vec(SB), NOSPLIT, $0-56
	MOVQ         a+0(FP), SI
	MOVQ         b+8(FP), DX
	MOVQ         out+16(FP), DI
	MOVQ         n+24(FP), CX
	MOVQ         q+32(FP), AX
	MOVQ         mr+40(FP), R8
	VPBROADCASTQ r2+48(FP), Z10
	MONT64_SETUP
	XORQ         AX, AX

mulB64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	VMOVDQU64 (DX)(AX*8), Z1
	MONT64(Z0, Z1, Z7)
	MONT64(Z7, Z10, Z9)
	VMOVDQU64 Z9, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        mulB64Loop
	VZEROUPPER
	RET

// func mulScalar64Vec(a, out *uint64, n int, w, ws, q uint64)
// out = MulShoupLazy(a, w, ws, q) reduced to [0, q), for any 64-bit a.
TEXT ·mulScalar64Vec(SB), NOSPLIT, $0-48
	MOVQ         a+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ w+24(FP), Z24
	VPBROADCASTQ ws+32(FP), Z23
	VPSRLQ       $32, Z23, Z22
	MOVQ         q+40(FP), AX
	MOVQ         $0, R8
	MONT64_SETUP
	XORQ         AX, AX

mulS64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	MULHI64(Z0, Z23, Z22, Z2)
	VPMULLQ   Z24, Z0, Z3
	VPMULLQ   Z31, Z2, Z2
	VPSUBQ    Z2, Z3, Z3
	VPSUBQ    Z31, Z3, Z4
	VPMINUQ   Z4, Z3, Z3
	VMOVDQU64 Z3, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        mulS64Loop
	VZEROUPPER
	RET

// func reduce64Vec(a, out *uint64, n int, q, bred uint64)
// out = Modulus.Reduce(a): Barrett with bred = ⌊2^128/q⌋ >> 64.
TEXT ·reduce64Vec(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), SI
	MOVQ         out+8(FP), DI
	MOVQ         n+16(FP), CX
	MOVQ         q+24(FP), AX
	VPBROADCASTQ bred+32(FP), Z26
	VPSRLQ       $32, Z26, Z25
	MOVQ         $0, R8
	MONT64_SETUP
	XORQ         AX, AX

red64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	MULHI64(Z0, Z26, Z25, Z2)
	VPMULLQ   Z31, Z2, Z2
	VPSUBQ    Z2, Z0, Z3
	VPSUBQ    Z31, Z3, Z4
	VPMINUQ   Z4, Z3, Z3
	VMOVDQU64 Z3, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        red64Loop
	VZEROUPPER
	RET

// func macMontSum64Vec(as, bs **uint64, terms int, acc *uint64, n int, q, mr uint64)
// For every 8 lanes: LO, MID, HI = Σ a0·b0, Σ (a0·b1 + a1·b0), Σ a1·b1 over
// the terms, with a = a1·2^30 + a0 (a0 < 2^30, a1 < 2^32, each
// partial product about 2^60, so sumGroup64(q) terms fit in 64 bits). The sum
// V = LO + MID·2^30 + HI·2^60 = H·2^64 + L (< q·2^64: sumGroup64) is
// reduced as in MONT64: r = H − ⌊(L·mr mod 2^64)·q/2^64⌋ + q ∈ (0, 2q).
// Z26 = 2^30 − 1, Z25 = 1; K1, K2 carries.
TEXT ·macMontSum64Vec(SB), NOSPLIT, $0-56
	MOVQ         as+0(FP), R11
	MOVQ         bs+8(FP), R12
	MOVQ         terms+16(FP), R13
	MOVQ         acc+24(FP), DI
	MOVQ         n+32(FP), CX
	MOVQ         q+40(FP), AX
	MOVQ         mr+48(FP), R8
	MONT64_SETUP
	MOVQ         $0x3fffffff, BX
	VPBROADCASTQ BX, Z26
	MOVQ         $1, BX
	VPBROADCASTQ BX, Z25
	XORQ         AX, AX

macSumLanes:
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	XORQ   BX, BX

macSumTerms:
	MOVQ      (R11)(BX*8), R9
	MOVQ      (R12)(BX*8), R10
	VMOVDQU64 (R9)(AX*8), Z0
	VMOVDQU64 (R10)(AX*8), Z1
	VPSRLQ    $30, Z0, Z2
	VPSRLQ    $30, Z1, Z3
	VPANDQ    Z26, Z0, Z0
	VPANDQ    Z26, Z1, Z1
	VPMULUDQ  Z0, Z1, Z4
	VPMULUDQ  Z2, Z3, Z5
	VPMULUDQ  Z0, Z3, Z6
	VPMULUDQ  Z2, Z1, Z7
	VPADDQ    Z4, Z10, Z10
	VPADDQ    Z5, Z12, Z12
	VPADDQ    Z6, Z11, Z11
	VPADDQ    Z7, Z11, Z11
	INCQ      BX
	CMPQ      BX, R13
	JB        macSumTerms

	// L = LO + MID·2^30 + HI·2^60 (mod 2^64), H = the carries out of it.
	VPSLLQ  $30, Z11, Z4
	VPSRLQ  $34, Z11, Z5
	VPSLLQ  $60, Z12, Z6
	VPSRLQ  $4, Z12, Z7
	VPADDQ  Z4, Z10, Z10
	VPCMPUQ $1, Z4, Z10, K1
	VPADDQ  Z6, Z10, Z10
	VPCMPUQ $1, Z6, Z10, K2
	VPADDQ  Z7, Z5, Z5
	VPADDQ  Z25, Z5, K1, Z5
	VPADDQ  Z25, Z5, K2, Z5

	// r = H − ⌊(L·mr)·q/2^64⌋ + q, to [0, q), added to acc.
	VPMULLQ   Z27, Z10, Z6
	MULHI64(Z6, Z31, Z28, Z7)
	VPSUBQ    Z7, Z5, Z5
	VPADDQ    Z31, Z5, Z5
	VPSUBQ    Z31, Z5, Z8
	VPMINUQ   Z8, Z5, Z5
	VPADDQ    (DI)(AX*8), Z5, Z5
	VPSUBQ    Z31, Z5, Z8
	VPMINUQ   Z8, Z5, Z5
	VMOVDQU64 Z5, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        macSumLanes
	VZEROUPPER
	RET
