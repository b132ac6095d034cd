package rnsbench

import (
	"fmt"
	"testing"
)

func TestBenchKernels(t *testing.T) {
	res, err := BenchKernels(10, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ntt", "intt", "mulmod", "mac", "add", "automorphism", "bconv"}
	if len(res) != 2*len(want) {
		t.Fatalf("%d results, want %d", len(res), 2*len(want))
	}
	for i, r := range res {
		if r.Kernel != want[i%len(want)] || r.LogN != 10 || (r.QBits != 49 && r.QBits != 60) {
			t.Fatalf("result %d: %+v", i, r)
		}
		if r.OursNs <= 0 || r.LattigoNs <= 0 || r.Speedup != r.LattigoNs/r.OursNs {
			t.Fatalf("result %d has no timing: %+v", i, r)
		}
	}
	for _, bad := range [][2]int{{3, 1}, {18, 1}, {10, 0}} {
		if _, err := BenchKernels(bad[0], bad[1]); err == nil {
			t.Fatalf("BenchKernels(%d, %d) accepted", bad[0], bad[1])
		}
	}
}

// BenchmarkKernels times each kernel, ours and Lattigo's, side by side at
// logN 16 with 49-bit (IFMA where present) and 60-bit primes:
//
//	go test -run '^$' -bench . ./bench/rnsbench
func BenchmarkKernels(b *testing.B) {
	for _, bits := range []int{49, 60} {
		ks, err := Kernels(16, bits)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range ks {
			for _, impl := range []struct {
				name string
				f    func()
			}{{"ours", k.Ours}, {"lattigo", k.Lattigo}} {
				b.Run(fmt.Sprintf("q%d/%s/%s", bits, k.Name, impl.name), func(b *testing.B) {
					for b.Loop() {
						impl.f()
					}
				})
			}
		}
	}
}
