//go:build amd64 && !purego

#include "textflag.h"

// Base conversion with IFMA (every modulus below 2^50). The Go driver in
// asm_amd64.go blocks the coefficients; these kernels handle cnt of them (a
// multiple of 8), reading y_i[c] at ys[i·stride + c].

// func bconvVIFMA(ys *uint64, stride, cnt, k int, qf *float64, v *uint64)
// (AVX-512DQ only, despite the name: both conversion paths use it.)
// v[c] = ⌊Σ_i float64(y_i[c]) / qf[i]⌋, summed in basis order from +0 with
// IEEE division and addition: the very operations accumulateGo performs.
TEXT ·bconvVIFMA(SB), NOSPLIT, $0-48
	MOVQ ys+0(FP), SI
	MOVQ stride+8(FP), R8
	MOVQ cnt+16(FP), CX
	MOVQ k+24(FP), DX
	MOVQ qf+32(FP), R9
	MOVQ v+40(FP), DI
	SHLQ $3, R8
	XORQ AX, AX

bvCoeff:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z2, Z2, Z2
	LEAQ   (SI)(AX*8), R10
	MOVQ   R9, R11
	MOVQ   DX, R12

bvTerm:
	VCVTUQQ2PD  (R10), Z1
	VCVTUQQ2PD  64(R10), Z3
	VDIVPD.BCST (R11), Z1, Z1
	VDIVPD.BCST (R11), Z3, Z3
	VADDPD      Z1, Z0, Z0
	VADDPD      Z3, Z2, Z2
	ADDQ        R8, R10
	ADDQ        $8, R11
	DECQ        R12
	JNZ         bvTerm

	VCVTTPD2UQQ Z0, Z0
	VCVTTPD2UQQ Z2, Z2
	VMOVDQU64   Z0, (DI)(AX*8)
	VMOVDQU64   Z2, 64(DI)(AX*8)
	ADDQ        $16, AX
	CMPQ        AX, CX
	JB          bvCoeff
	VZEROUPPER
	RET

// REDC2(S_LO, S_HI, OUT): OUT = S·2^-104 mod p in [0, p) for
// S = S_HI·2^52 + S_LO with S_LO < 2^58, S_HI < 2^54, p < 2^50 (Z31 = p,
// Z27 = p^-1 mod 2^52, Z28 = 2^52 − 1): two exact radix-2^52 Montgomery
// reductions, each (x − m·p)/2^52 with m = x·p^-1 mod 2^52.
#define REDC2(S_LO, S_HI, OUT) \
	VPSRLQ      $52, S_LO, Z4;   \
	VPANDQ      Z28, S_LO, S_LO; \
	VPADDQ      Z4, S_HI, S_HI;  \
	VPXORQ      Z5, Z5, Z5;      \
	VPMADD52LUQ Z27, S_LO, Z5;   \
	VPXORQ      Z6, Z6, Z6;      \
	VPMADD52HUQ Z31, Z5, Z6;     \
	VPSUBQ      Z6, S_HI, S_HI;  \
	VPADDQ      Z31, S_HI, S_HI; \
	VPSRLQ      $52, S_HI, OUT;  \
	VPANDQ      Z28, S_HI, S_HI; \
	VPXORQ      Z5, Z5, Z5;      \
	VPMADD52LUQ Z27, S_HI, Z5;   \
	VPXORQ      Z6, Z6, Z6;      \
	VPMADD52HUQ Z31, Z5, Z6;     \
	VPSUBQ      Z6, OUT, OUT;    \
	VPADDQ      Z31, OUT, OUT;   \
	VPSUBQ      Z31, OUT, Z5;    \
	VPMINUQ     Z5, OUT, OUT

// func bconvAccIFMA(ys *uint64, stride, cnt, k int, w, v, out *uint64, p, pinv uint64)
// out[c] = (Σ_i y_i[c]·w[i] + v[c]·w[k])·2^-104 mod p, with w[i] =
// (Q/q_i mod p)·2^104 mod p and w[k] = (−Q mod p)·2^104 mod p: the 104-bit
// sums accumulate in (lo, hi) halves of the IFMA products.
TEXT ·bconvAccIFMA(SB), NOSPLIT, $0-72
	MOVQ         ys+0(FP), SI
	MOVQ         stride+8(FP), R8
	MOVQ         cnt+16(FP), CX
	MOVQ         k+24(FP), DX
	MOVQ         w+32(FP), R9
	MOVQ         v+40(FP), BX
	MOVQ         out+48(FP), DI
	VPBROADCASTQ p+56(FP), Z31
	VPBROADCASTQ pinv+64(FP), Z27
	MOVQ         $0xfffffffffffff, AX
	VPBROADCASTQ AX, Z28
	SHLQ         $3, R8
	LEAQ         (R9)(DX*8), R13
	XORQ         AX, AX

baCoeff:
	VMOVDQU64 (BX)(AX*8), Z2
	VMOVDQU64 64(BX)(AX*8), Z3
	VPXORQ    Z0, Z0, Z0
	VPXORQ    Z1, Z1, Z1
	VPXORQ    Z10, Z10, Z10
	VPXORQ    Z11, Z11, Z11
	VPMADD52LUQ.BCST (R13), Z2, Z0
	VPMADD52HUQ.BCST (R13), Z2, Z1
	VPMADD52LUQ.BCST (R13), Z3, Z10
	VPMADD52HUQ.BCST (R13), Z3, Z11
	LEAQ      (SI)(AX*8), R10
	MOVQ      R9, R11
	MOVQ      DX, R12

baTerm:
	VMOVDQU64        (R10), Z2
	VMOVDQU64        64(R10), Z3
	VPMADD52LUQ.BCST (R11), Z2, Z0
	VPMADD52HUQ.BCST (R11), Z2, Z1
	VPMADD52LUQ.BCST (R11), Z3, Z10
	VPMADD52HUQ.BCST (R11), Z3, Z11
	ADDQ             R8, R10
	ADDQ             $8, R11
	DECQ             R12
	JNZ              baTerm

	REDC2(Z0, Z1, Z7)
	REDC2(Z10, Z11, Z8)
	VMOVDQU64 Z7, (DI)(AX*8)
	VMOVDQU64 Z8, 64(DI)(AX*8)
	ADDQ      $16, AX
	CMPQ      AX, CX
	JB        baCoeff
	VZEROUPPER
	RET

// func bconvYIFMA(x, y *uint64, n int, q, qinv, a, b uint64)
// y = x·(Q/q_i)^-1 mod q in [0, q) for any 64-bit x (q < 2^50): with
// x = xh·2^52 + xl, a = (Q/q_i)^-1·2^104 mod q and b = a·2^52 mod q,
// y = (xl·a + xh·b)·2^-104 mod q, by REDC2 on the 104-bit sum.
TEXT ·bconvYIFMA(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ q+24(FP), Z31
	VPBROADCASTQ qinv+32(FP), Z27
	VPBROADCASTQ a+40(FP), Z25
	VPBROADCASTQ b+48(FP), Z26
	MOVQ         $0xfffffffffffff, AX
	VPBROADCASTQ AX, Z28
	XORQ         AX, AX

byLoop:
	VMOVDQU64   (SI)(AX*8), Z2
	VPSRLQ      $52, Z2, Z3
	VPANDQ      Z28, Z2, Z2
	VPXORQ      Z0, Z0, Z0
	VPXORQ      Z1, Z1, Z1
	VPMADD52LUQ Z25, Z2, Z0
	VPMADD52HUQ Z25, Z2, Z1
	VPMADD52LUQ Z26, Z3, Z0
	VPMADD52HUQ Z26, Z3, Z1
	REDC2(Z0, Z1, Z7)
	VMOVDQU64   Z7, (DI)(AX*8)
	ADDQ        $8, AX
	CMPQ        AX, CX
	JB          byLoop
	VZEROUPPER
	RET

// AVX-512F/DQ base conversion for moduli ≥ 2^50 (below 2^62): the very
// operations of computeYGo and accumulateGo on eight coefficients at a time
// (64×64-bit products from 32-bit pieces). bconvVIFMA needs only AVX-512DQ
// and serves both paths.

// MULHI64(X, Y, Y1, OUT): OUT = ⌊X·Y/2^64⌋, Y1 = Y >> 32, Z29 = 2^32 − 1;
// Z16–Z19 scratch; OUT ∉ {X, Y, Y1}.
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

// BRED64(X, OUT): OUT = Modulus.Reduce(X) (Barrett with Z26 = ⌊2^128/q⌋>>64,
// Z25 = Z26 >> 32, Z31 = q); Z15 scratch, OUT ≠ X.
#define BRED64(X, OUT) \
	MULHI64(X, Z26, Z25, Z15); \
	VPMULLQ Z31, Z15, Z15;     \
	VPSUBQ  Z15, X, OUT;       \
	VPSUBQ  Z31, OUT, Z15;     \
	VPMINUQ Z15, OUT, OUT

// func bconvY64(x, y *uint64, n int, q, bred, w, ws uint64)
// y = MulShoupLazy(Reduce(x), w, ws) reduced to [0, q), as computeYRow does.
TEXT ·bconvY64(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ q+24(FP), Z31
	VPBROADCASTQ bred+32(FP), Z26
	VPSRLQ       $32, Z26, Z25
	VPBROADCASTQ w+40(FP), Z24
	VPBROADCASTQ ws+48(FP), Z23
	VPSRLQ       $32, Z23, Z22
	MOVQ         $0xffffffff, AX
	VPBROADCASTQ AX, Z29
	XORQ         AX, AX

by64Loop:
	VMOVDQU64 (SI)(AX*8), Z0
	BRED64(Z0, Z1)
	MULHI64(Z1, Z23, Z22, Z2)
	VPMULLQ   Z24, Z1, Z3
	VPMULLQ   Z31, Z2, Z2
	VPSUBQ    Z2, Z3, Z3
	VPSUBQ    Z31, Z3, Z4
	VPMINUQ   Z4, Z3, Z3
	VMOVDQU64 Z3, (DI)(AX*8)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        by64Loop
	VZEROUPPER
	RET

// func bconvAcc64(ys *uint64, stride, cnt, k int, w, v, out *uint64, p, mred, bred uint64, vq *uint64)
// out[c] = Reduce(hi − ⌊(lo·mred mod 2^64)·p/2^64⌋ + p) + vq[v[c]] mod p with
// hi:lo = Σ_i y_i[c]·w[i] (128-bit), as accumulateGo computes it; v[c] is
// clamped to k so the table read vq[0..k] stays in bounds.
TEXT ·bconvAcc64(SB), NOSPLIT, $0-88
	MOVQ         ys+0(FP), SI
	MOVQ         stride+8(FP), R8
	MOVQ         cnt+16(FP), CX
	MOVQ         k+24(FP), DX
	MOVQ         w+32(FP), R9
	MOVQ         v+40(FP), BX
	MOVQ         out+48(FP), DI
	VPBROADCASTQ p+56(FP), Z31
	VPBROADCASTQ mred+64(FP), Z28
	VPBROADCASTQ bred+72(FP), Z26
	VPSRLQ       $32, Z26, Z25
	MOVQ         vq+80(FP), R13
	VPBROADCASTQ DX, Z21
	VPSRLQ       $32, Z31, Z24
	MOVQ         $0xffffffff, AX
	VPBROADCASTQ AX, Z29
	MOVQ         $1, AX
	VPBROADCASTQ AX, Z20
	SHLQ         $3, R8
	XORQ         AX, AX

ba64Coeff:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	LEAQ   (SI)(AX*8), R10
	MOVQ   R9, R11
	MOVQ   DX, R12

ba64Term:
	VMOVDQU64    (R10), Z2
	VPBROADCASTQ (R11), Z3
	VPSRLQ       $32, Z3, Z4
	MULHI64(Z2, Z3, Z4, Z5)
	VPMULLQ      Z3, Z2, Z6
	VPADDQ       Z6, Z1, Z1
	VPCMPUQ      $1, Z6, Z1, K1
	VPADDQ       Z5, Z0, Z0
	VPADDQ       Z20, Z0, K1, Z0
	ADDQ         R8, R10
	ADDQ         $8, R11
	DECQ         R12
	JNZ          ba64Term

	// Montgomery step: h = ⌊(lo·mred)·p/2^64⌋, r = Reduce(hi − h + p).
	VPMULLQ Z28, Z1, Z1
	MULHI64(Z1, Z31, Z24, Z5)
	VPSUBQ  Z5, Z0, Z0
	VPADDQ  Z31, Z0, Z0
	BRED64(Z0, Z7)

	// + vq[min(v, k)], then one conditional subtraction.
	VMOVDQU64  (BX)(AX*8), Z8
	VPMINUQ    Z21, Z8, Z8
	KXNORW     K2, K2, K2
	VPXORQ     Z9, Z9, Z9
	VPGATHERQQ (R13)(Z8*8), K2, Z9
	VPADDQ     Z9, Z7, Z7
	VPSUBQ     Z31, Z7, Z8
	VPMINUQ    Z8, Z7, Z7
	VMOVDQU64  Z7, (DI)(AX*8)
	ADDQ       $8, AX
	CMPQ       AX, CX
	JB         ba64Coeff
	VZEROUPPER
	RET
