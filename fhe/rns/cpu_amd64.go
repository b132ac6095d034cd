//go:build amd64 && !purego

package rns

import "golang.org/x/sys/cpu"

var useIFMA, useAVX512 bool

// detect enables the assembly kernels the CPU supports.
func detect() {
	hasAVX512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW
	useAVX512 = hasAVX512 && asmAVX512Ready && !forcePureGo
	useIFMA = useAVX512 && cpu.X86.HasAVX512IFMA && asmIFMAReady
}
