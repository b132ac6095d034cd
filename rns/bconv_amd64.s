//go:build amd64 && !purego

#include "textflag.h"

// Base conversion with IFMA (every modulus below 2^50). The Go driver in
// asm_amd64.go blocks the coefficients; these kernels handle cnt of them (a
// multiple of 8), reading y_i[c] at ys[i·stride + c].

// func bconvVIFMA(ys *uint64, stride, cnt, k int, qf *float64, v *uint64)
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
