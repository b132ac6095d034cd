package membw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
)

func TestTriadAndRead(t *testing.T) {
	ctx := context.Background()
	for _, threads := range []int{1, 2, 0} {
		for name, f := range map[string]func(context.Context, int, int) (float64, error){"Triad": Triad, "Read": Read} {
			gbps, err := f(ctx, 8<<20, threads)
			if err != nil {
				t.Fatalf("%s(8 MiB, %d threads): %v", name, threads, err)
			}
			if !(gbps > 0) || math.IsInf(gbps, 0) {
				t.Fatalf("%s(8 MiB, %d threads) = %v GB/s", name, threads, gbps)
			}
			t.Logf("%s, %d threads, 8 MiB: %.1f GB/s", name, threads, gbps)
		}
	}
}

// TestTriadComputes: the timed kernel is STREAM's triad on every element of
// every part.
func TestTriadComputes(t *testing.T) {
	n := 10007
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range b {
		b[i], c[i] = float64(i), float64(2*i+1)
	}
	w := newWorkers(3, n)
	defer w.stop()
	w.run(func(_, lo, hi int) { triad(a[lo:hi], b[lo:hi], c[lo:hi], triadScalar) })
	for i := range a {
		if want := float64(i) + 3*float64(2*i+1); a[i] != want {
			t.Fatalf("a[%d] = %v, want %v", i, a[i], want)
		}
	}
	if got := sum(b[:1001]); got != 1000*1001/2 {
		t.Fatalf("sum(0..1000) = %v", got)
	}
}

func TestArgs(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ bytes, threads int }{{-1, 1}, {MinBytes - 1, 1}, {MaxBytes + 1, 1}, {MinBytes, 1 << 20}} {
		if _, err := Triad(ctx, c.bytes, c.threads); !errors.Is(err, ErrArgs) {
			t.Errorf("Triad(%d, %d) = %v, want ErrArgs", c.bytes, c.threads, err)
		}
		if _, err := Read(ctx, c.bytes, c.threads); !errors.Is(err, ErrArgs) {
			t.Errorf("Read(%d, %d) = %v, want ErrArgs", c.bytes, c.threads, err)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Triad(done, MinBytes, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Triad with a cancelled context = %v", err)
	}
}

// BenchmarkTriad and BenchmarkRead report this machine's figures (GB/s,
// DefaultBytes) on one thread and on every core; each op is one whole
// measurement (five passes, the best kept).
func BenchmarkTriad(b *testing.B) { bench(b, Triad) }
func BenchmarkRead(b *testing.B)  { bench(b, Read) }

func bench(b *testing.B, f func(context.Context, int, int) (float64, error)) {
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			var best float64
			for range b.N {
				g, err := f(context.Background(), 0, threads)
				if err != nil {
					b.Fatal(err)
				}
				best = max(best, g)
			}
			b.ReportMetric(best, "GB/s")
		})
	}
}
