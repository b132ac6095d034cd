//go:build amd64 && !purego

#include "textflag.h"

// func vnniRoof(n int) uint32
//
// n iterations of twelve independent vpdpbusd on registers (every byte 1,
// so each adds 4 to every lane): the instruction's issue rate with no
// memory operand. Returns lane 0 of the twelve accumulators summed (48·n,
// wrapping), so a test can see every instruction ran.
TEXT ·vnniRoof(SB), NOSPLIT, $0-12
	MOVQ           n+0(FP), CX
	MOVL           $0x01010101, AX
	VPBROADCASTD   AX, Z16
	VPXORD         Z0, Z0, Z0
	VPXORD         Z1, Z1, Z1
	VPXORD         Z2, Z2, Z2
	VPXORD         Z3, Z3, Z3
	VPXORD         Z4, Z4, Z4
	VPXORD         Z5, Z5, Z5
	VPXORD         Z6, Z6, Z6
	VPXORD         Z7, Z7, Z7
	VPXORD         Z8, Z8, Z8
	VPXORD         Z9, Z9, Z9
	VPXORD         Z10, Z10, Z10
	VPXORD         Z11, Z11, Z11
	TESTQ          CX, CX
	JZ             done

loop:
	VPDPBUSD Z16, Z16, Z0
	VPDPBUSD Z16, Z16, Z1
	VPDPBUSD Z16, Z16, Z2
	VPDPBUSD Z16, Z16, Z3
	VPDPBUSD Z16, Z16, Z4
	VPDPBUSD Z16, Z16, Z5
	VPDPBUSD Z16, Z16, Z6
	VPDPBUSD Z16, Z16, Z7
	VPDPBUSD Z16, Z16, Z8
	VPDPBUSD Z16, Z16, Z9
	VPDPBUSD Z16, Z16, Z10
	VPDPBUSD Z16, Z16, Z11
	DECQ     CX
	JNZ      loop

done:
	VPADDD X1, X0, X0
	VPADDD X3, X2, X2
	VPADDD X5, X4, X4
	VPADDD X7, X6, X6
	VPADDD X9, X8, X8
	VPADDD X11, X10, X10
	VPADDD X2, X0, X0
	VPADDD X6, X4, X4
	VPADDD X10, X8, X8
	VPADDD X4, X0, X0
	VPADDD X8, X0, X0
	VMOVD  X0, AX
	MOVL   AX, ret+8(FP)
	VZEROUPPER
	RET

// func avx2Roof(n int) uint32
//
// The same for vpmaddwd on 256-bit registers (every word 1, so each adds 2
// to every lane): 24·n in lane 0.
TEXT ·avx2Roof(SB), NOSPLIT, $0-12
	MOVQ         n+0(FP), CX
	MOVL         $0x00010001, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	VPXOR        Y2, Y2, Y2
	VPXOR        Y3, Y3, Y3
	VPXOR        Y4, Y4, Y4
	VPXOR        Y5, Y5, Y5
	VPXOR        Y6, Y6, Y6
	VPXOR        Y7, Y7, Y7
	VPXOR        Y8, Y8, Y8
	VPXOR        Y9, Y9, Y9
	VPXOR        Y10, Y10, Y10
	VPXOR        Y11, Y11, Y11
	TESTQ        CX, CX
	JZ           done2

loop2:
	VPMADDWD Y15, Y15, Y12
	VPADDD   Y12, Y0, Y0
	VPMADDWD Y15, Y15, Y13
	VPADDD   Y13, Y1, Y1
	VPMADDWD Y15, Y15, Y14
	VPADDD   Y14, Y2, Y2
	VPMADDWD Y15, Y15, Y12
	VPADDD   Y12, Y3, Y3
	VPMADDWD Y15, Y15, Y13
	VPADDD   Y13, Y4, Y4
	VPMADDWD Y15, Y15, Y14
	VPADDD   Y14, Y5, Y5
	VPMADDWD Y15, Y15, Y12
	VPADDD   Y12, Y6, Y6
	VPMADDWD Y15, Y15, Y13
	VPADDD   Y13, Y7, Y7
	VPMADDWD Y15, Y15, Y14
	VPADDD   Y14, Y8, Y8
	VPMADDWD Y15, Y15, Y12
	VPADDD   Y12, Y9, Y9
	VPMADDWD Y15, Y15, Y13
	VPADDD   Y13, Y10, Y10
	VPMADDWD Y15, Y15, Y14
	VPADDD   Y14, Y11, Y11
	DECQ     CX
	JNZ      loop2

done2:
	VPADDD X1, X0, X0
	VPADDD X3, X2, X2
	VPADDD X5, X4, X4
	VPADDD X7, X6, X6
	VPADDD X9, X8, X8
	VPADDD X11, X10, X10
	VPADDD X2, X0, X0
	VPADDD X6, X4, X4
	VPADDD X10, X8, X8
	VPADDD X4, X0, X0
	VPADDD X8, X0, X0
	VMOVD  X0, AX
	MOVL   AX, ret+8(FP)
	VZEROUPPER
	RET
