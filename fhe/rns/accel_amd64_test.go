//go:build amd64 && !purego

package rns

import (
	"fmt"
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

// TestMont64Kernels runs the AVX-512F Montgomery kernels, which the dispatch
// uses only for q ≥ 2^50 on IFMA machines, on every modulus size against
// mulMontGo and macMontGo, including non-canonical b (any a·b < q·2^64).
func TestMont64Kernels(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512")
	}
	for _, q := range []uint64{3, (1 << 20) + 7, largestNTTPrime(t, 49, 4), largestNTTPrime(t, 60, 4), largestNTTPrime(t, 62, 4)} {
		m, _ := NewModulus(q)
		const n = 64
		a, acc := randLimb(t, n, q), randLimb(t, n, q)
		for _, b := range [][]uint64{randLimb(t, n, q), randLimb(t, n, ^uint64(0))} {
			want, got := make([]uint64, n), make([]uint64, n)
			mulMontGo(a, b, want, &m)
			mulMont64Vec(&a[0], &b[0], &got[0], n, q, m.MRedConst)
			assertEqual(t, fmt.Sprintf("mulMont64Vec q=%d", q), got, want)
			copy(want, acc)
			copy(got, acc)
			macMontGo(a, b, want, &m)
			macMont64Vec(&a[0], &b[0], &got[0], n, q, m.MRedConst)
			assertEqual(t, fmt.Sprintf("macMont64Vec q=%d", q), got, want)
		}
	}
}

// TestAVX512WithoutIFMA runs the fast-vs-Go suites as a CPU with AVX-512 but
// no IFMA would: every kernel then takes its AVX-512F code (or Go).
func TestAVX512WithoutIFMA(t *testing.T) {
	if !useAVX512 || !useIFMA {
		t.Skip("needs AVX-512 IFMA to switch it off")
	}
	useIFMA = false
	defer detect()
	t.Run("ntt", TestNTTFastMatchesGo)
	t.Run("elementwise", TestElementwiseFastMatchesGo)
	t.Run("bconv", TestBConvFastMatchesGo)
}
