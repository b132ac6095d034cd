package dataset

import (
	"io"
	"runtime"
	"testing"
)

// TestFVecsStreamMemory reads a 50 MB fvecs stream generated on the fly
// through an io.Pipe and checks that reading allocates nothing per vector
// and a bounded amount in all, and that every value arrives.
func TestFVecsStreamMemory(t *testing.T) {
	const (
		dim   = 128
		total = 50 << 20
		n     = total / (4 + 4*dim) // 101,601 vectors
	)
	value := func(i, j int) float32 { return float32((i*dim+j)%1_000_003) - 500_000 }

	pr, pw := io.Pipe()
	go func() {
		w := NewFVecsWriter(pw)
		vec := make([]float32, dim)
		for i := range n {
			for j := range vec {
				vec[j] = value(i, j)
			}
			if err := w.Write(vec); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.Close()
	}()
	defer pr.Close()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	v, err := NewVectorReader(pr, FVecs)
	if err != nil {
		t.Fatal(err)
	}
	check := func(vec []float32, err error) {
		if err != nil {
			t.Fatalf("vector %d: %v", v.Count(), err)
		}
		i := v.Count() - 1
		if vec[0] != value(i, 0) || vec[dim-1] != value(i, dim-1) {
			t.Fatalf("vector %d = [%v ... %v], want [%v ... %v]", i, vec[0], vec[dim-1], value(i, 0), value(i, dim-1))
		}
	}
	for range 100 { // warm up: the first vector allocates the buffers
		check(v.Next())
	}
	allocs := testing.AllocsPerRun(20_000, func() { check(v.Next()) })
	if allocs > 0 {
		t.Errorf("%v allocations per Next after warm-up, want 0", allocs)
	}
	for {
		vec, err := v.Next()
		if err == io.EOF {
			break
		}
		check(vec, err)
	}
	if v.Count() != n {
		t.Fatalf("read %d vectors, want %d", v.Count(), n)
	}
	runtime.ReadMemStats(&after)
	grown := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d vectors (%d bytes): %d bytes allocated in all, %v per Next", n, n*(4+4*dim), grown, allocs)
	if grown > 16<<20 {
		t.Errorf("reading allocated %d bytes, want < 16 MiB", grown)
	}
}
