//go:build amd64 && !purego

#include "textflag.h"

// The packing's dot products with AVX-512 IFMA (dot52.go): VPMADD52LUQ
// and VPMADD52HUQ add the low and the high 52 bits of the 104-bit product
// of two words below 2^52, eight lanes at a time, to 64-bit sums L and H.

// TERM52(P, K): L (Z0) and H (Z1) gain the products of eight coefficients
// of one term (uses Z2, Z3).
#define TERM52(P, K) \
	VMOVDQU64   P, Z2; \
	VMOVDQU64   K, Z3; \
	VPMADD52LUQ Z3, Z2, Z0; \
	VPMADD52HUQ Z3, Z2, Z1

// func dot52x4(l, h *uint64, n int, p0, p1, p2, p3, k0, k1, k2, k3 *uint64)
TEXT ·dot52x4(SB), NOSPLIT, $0-88
	MOVQ l+0(FP), DI
	MOVQ h+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ p0+24(FP), R8
	MOVQ p1+32(FP), R9
	MOVQ p2+40(FP), R10
	MOVQ p3+48(FP), R11
	MOVQ k0+56(FP), R12
	MOVQ k1+64(FP), R13
	MOVQ k2+72(FP), R14
	MOVQ k3+80(FP), R15
	XORQ SI, SI
	SHLQ $3, CX
loop4:
	CMPQ SI, CX
	JAE  done4
	VMOVDQU64 (DI)(SI*1), Z0
	VMOVDQU64 (DX)(SI*1), Z1
	TERM52((R8)(SI*1), (R12)(SI*1))
	TERM52((R9)(SI*1), (R13)(SI*1))
	TERM52((R10)(SI*1), (R14)(SI*1))
	TERM52((R11)(SI*1), (R15)(SI*1))
	VMOVDQU64 Z0, (DI)(SI*1)
	VMOVDQU64 Z1, (DX)(SI*1)
	ADDQ $64, SI
	JMP  loop4
done4:
	VZEROUPPER
	RET

// func dot52x1(l, h *uint64, n int, p, k *uint64)
TEXT ·dot52x1(SB), NOSPLIT, $0-40
	MOVQ l+0(FP), DI
	MOVQ h+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ p+24(FP), R8
	MOVQ k+32(FP), R12
	XORQ SI, SI
	SHLQ $3, CX
loop1:
	CMPQ SI, CX
	JAE  done1
	VMOVDQU64 (DI)(SI*1), Z0
	VMOVDQU64 (DX)(SI*1), Z1
	TERM52((R8)(SI*1), (R12)(SI*1))
	VMOVDQU64 Z0, (DI)(SI*1)
	VMOVDQU64 Z1, (DX)(SI*1)
	ADDQ $64, SI
	JMP  loop1
done1:
	VZEROUPPER
	RET
