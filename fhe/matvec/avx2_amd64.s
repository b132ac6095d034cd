//go:build amd64 && !purego

#include "textflag.h"

// func avx2MulAdd(qs *asmQuery, nq int, tile *byte, stride, rows, width int)
//
// vnniMulAdd's loops with two planes of 16-bit digits: 16 matrix bytes at a
// time widened to words (vpmovzxbw) and multiplied by 16 digits with
// vpmaddwd (pairs summed into 32-bit lanes: |255 · 2^15 · 2| < 2^31), eight
// accumulators (four rows × two planes), each row recombined as
// a0 + a1<<16. Registers as in vnniMulAdd; R8 is the plane step in bytes.
TEXT ·avx2MulAdd(SB), NOSPLIT, $0-48
	MOVQ tile+16(FP), R11
	MOVQ stride+24(FP), DX
	LEAQ (DX)(DX*2), R13
	XORQ R12, R12

rowLoop:
	MOVQ qs+0(FP), BX
	MOVQ nq+8(FP), R10

queryLoop:
	MOVQ  8(BX), DI
	MOVQ  16(BX), R8
	MOVQ  R11, SI
	MOVQ  width+40(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7

colLoop:
	VMOVDQU   (DI), Y8
	VMOVDQU   (DI)(R8*1), Y9
	VMOVDQU   32(DI), Y10
	VMOVDQU   32(DI)(R8*1), Y11
	LEAQ       (SI)(DX*4), AX
	PREFETCHT0 (AX)
	PREFETCHT0 (AX)(DX*1)
	PREFETCHT0 (AX)(DX*2)
	PREFETCHT0 (AX)(R13*1)
	VPMOVZXBW (SI), Y12
	VPMADDWD  Y8, Y12, Y13
	VPADDD    Y13, Y0, Y0
	VPMADDWD  Y9, Y12, Y12
	VPADDD    Y12, Y1, Y1
	VPMOVZXBW 16(SI), Y14
	VPMADDWD  Y10, Y14, Y15
	VPADDD    Y15, Y0, Y0
	VPMADDWD  Y11, Y14, Y14
	VPADDD    Y14, Y1, Y1
	VPMOVZXBW (SI)(DX*1), Y12
	VPMADDWD  Y8, Y12, Y13
	VPADDD    Y13, Y2, Y2
	VPMADDWD  Y9, Y12, Y12
	VPADDD    Y12, Y3, Y3
	VPMOVZXBW 16(SI)(DX*1), Y14
	VPMADDWD  Y10, Y14, Y15
	VPADDD    Y15, Y2, Y2
	VPMADDWD  Y11, Y14, Y14
	VPADDD    Y14, Y3, Y3
	VPMOVZXBW (SI)(DX*2), Y12
	VPMADDWD  Y8, Y12, Y13
	VPADDD    Y13, Y4, Y4
	VPMADDWD  Y9, Y12, Y12
	VPADDD    Y12, Y5, Y5
	VPMOVZXBW 16(SI)(DX*2), Y14
	VPMADDWD  Y10, Y14, Y15
	VPADDD    Y15, Y4, Y4
	VPMADDWD  Y11, Y14, Y14
	VPADDD    Y14, Y5, Y5
	VPMOVZXBW (SI)(R13*1), Y12
	VPMADDWD  Y8, Y12, Y13
	VPADDD    Y13, Y6, Y6
	VPMADDWD  Y9, Y12, Y12
	VPADDD    Y12, Y7, Y7
	VPMOVZXBW 16(SI)(R13*1), Y14
	VPMADDWD  Y10, Y14, Y15
	VPADDD    Y15, Y6, Y6
	VPMADDWD  Y11, Y14, Y14
	VPADDD    Y14, Y7, Y7
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	JNZ       colLoop

	// Each row: a0 + a1<<16; then the four rows across lanes into X0.
	VPSLLD       $16, Y1, Y1
	VPADDD       Y1, Y0, Y0
	VPSLLD       $16, Y3, Y3
	VPADDD       Y3, Y2, Y2
	VPSLLD       $16, Y5, Y5
	VPADDD       Y5, Y4, Y4
	VPSLLD       $16, Y7, Y7
	VPADDD       Y7, Y6, Y6
	VPHADDD      Y2, Y0, Y0
	VPHADDD      Y6, Y4, Y4
	VPHADDD      Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	MOVQ         (BX), AX
	VPADDD       (AX)(R12*4), X0, X0
	VMOVDQU      X0, (AX)(R12*4)

	ADDQ $24, BX
	DECQ R10
	JNZ  queryLoop

	LEAQ (R11)(DX*4), R11
	ADDQ $4, R12
	CMPQ R12, rows+32(FP)
	JB   rowLoop
	VZEROUPPER
	RET

// func avx2MulAddRows(acc *uint32, plane unsafe.Pointer, step int, tile *byte, stride, rows, width int)
//
// vnniMulAddRows with two planes of 16-bit digits: each row's width bytes
// (a multiple of 64) in order, 16 at a time widened to words and
// multiplied by vpmaddwd into two sets of two plane accumulators, the row
// recombined (a0 + a1<<16) and summed across lanes into acc[i]; the rows
// prefetched 2 KiB ahead. R8 is the plane step in bytes.
TEXT ·avx2MulAddRows(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), BX
	MOVQ step+16(FP), R8
	MOVQ tile+24(FP), R11
	MOVQ rows+40(FP), R10

rowLoop2:
	MOVQ  plane+8(FP), DI
	MOVQ  R11, SI
	MOVQ  width+48(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

colLoop2:
	PREFETCHT0 2048(SI)
	VPMOVZXBW  (SI), Y4
	VPMADDWD   (DI), Y4, Y5
	VPADDD     Y5, Y0, Y0
	VPMADDWD   (DI)(R8*1), Y4, Y4
	VPADDD     Y4, Y1, Y1
	VPMOVZXBW  16(SI), Y6
	VPMADDWD   32(DI), Y6, Y7
	VPADDD     Y7, Y2, Y2
	VPMADDWD   32(DI)(R8*1), Y6, Y6
	VPADDD     Y6, Y3, Y3
	VPMOVZXBW  32(SI), Y4
	VPMADDWD   64(DI), Y4, Y5
	VPADDD     Y5, Y0, Y0
	VPMADDWD   64(DI)(R8*1), Y4, Y4
	VPADDD     Y4, Y1, Y1
	VPMOVZXBW  48(SI), Y6
	VPMADDWD   96(DI), Y6, Y7
	VPADDD     Y7, Y2, Y2
	VPMADDWD   96(DI)(R8*1), Y6, Y6
	VPADDD     Y6, Y3, Y3
	ADDQ       $64, SI
	ADDQ       $128, DI
	SUBQ       $64, CX
	JNZ        colLoop2

	VPADDD       Y2, Y0, Y0
	VPADDD       Y3, Y1, Y1
	VPSLLD       $16, Y1, Y1
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	ADDL         AX, (BX)
	ADDQ         $4, BX
	ADDQ         stride+32(FP), R11
	DECQ         R10
	JNZ          rowLoop2
	VZEROUPPER
	RET
