//go:build amd64 && !purego

package rns

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestFastPathsActive guards against the fast-path tests silently comparing
// the Go code with itself: on a CPU with AVX-512 (IFMA) the kernels must be on.
func TestFastPathsActive(t *testing.T) {
	avx512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW
	want := "purego"
	switch {
	case avx512 && cpu.X86.HasAVX512IFMA:
		want = "avx512-ifma"
	case avx512:
		want = "avx512"
	}
	if got := Accelerated(); got != want {
		t.Fatalf("Accelerated() = %q on this CPU, want %q", got, want)
	}
	SetPureGo(true)
	if got := Accelerated(); got != "purego" {
		t.Fatalf("after SetPureGo(true): %q", got)
	}
	SetPureGo(false)
	if got := Accelerated(); got != want {
		t.Fatalf("after SetPureGo(false): %q, want %q", got, want)
	}
}
