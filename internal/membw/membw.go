// Package membw measures this machine's memory bandwidth the way STREAM
// does (McCalpin): a triad a[i] = b[i] + s·c[i] over float64 arrays far
// larger than the last-level cache, every core working on its own part, the
// best of several repetitions, counting the bytes STREAM counts (three arrays
// of 8-byte elements, no write-allocate traffic). Read is the same sweep
// reading one array, the limit of a scan that only reads.
package membw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

const (
	// DefaultBytes is the memory a measurement uses when asked for 0: for
	// the triad three arrays of 128 MiB, four times and more the last-level
	// cache of today's server parts, as STREAM asks.
	DefaultBytes = 384 << 20
	// MinBytes and MaxBytes bound what a caller may ask for: less is not a
	// measurement of memory, more risks the machine's.
	MinBytes = 1 << 20
	MaxBytes = 64 << 30
	// repetitions: the best of these is reported (STREAM takes the best of
	// ten; five settle on an idle machine).
	repetitions = 5
	triadScalar = 3.0
)

// ErrArgs reports a size or thread count outside what the package measures.
var ErrArgs = errors.New("membw: arguments")

// Triad returns the best STREAM triad bandwidth in GB/s (10^9 bytes a
// second) over three float64 arrays of bytes/3 bytes together, split over
// threads OS threads (≤ 0: GOMAXPROCS). bytes 0 means DefaultBytes.
func Triad(ctx context.Context, bytes, threads int) (float64, error) {
	n, threads, err := elements(bytes, 3, threads)
	if err != nil {
		return 0, err
	}
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	w := newWorkers(threads, n)
	defer w.stop()
	// Each thread touches its own part first, as STREAM does, so the pages
	// sit where that thread runs.
	w.run(func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i], b[i], c[i] = 1, 2, 0.5
		}
	})
	best, err := w.best(ctx, func(_, lo, hi int) { triad(a[lo:hi], b[lo:hi], c[lo:hi], triadScalar) })
	if err != nil {
		return 0, err
	}
	return float64(3*8*n) / best / 1e9, nil
}

// Read returns the best bandwidth in GB/s of summing one float64 array of
// bytes bytes (0: DefaultBytes), split over threads OS threads (≤ 0:
// GOMAXPROCS).
func Read(ctx context.Context, bytes, threads int) (float64, error) {
	n, threads, err := elements(bytes, 1, threads)
	if err != nil {
		return 0, err
	}
	a := make([]float64, n)
	w := newWorkers(threads, n)
	defer w.stop()
	w.run(func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i] = 1
		}
	})
	sums := make([]float64, threads)
	best, err := w.best(ctx, func(p, lo, hi int) { sums[p] = sum(a[lo:hi]) })
	if err != nil {
		return 0, err
	}
	var total float64
	for _, s := range sums {
		total += s
	}
	if total != float64(n) { // every element read: a broken sweep is not a figure
		return 0, fmt.Errorf("membw: the read pass summed %v, want %d", total, n)
	}
	return float64(8*n) / best / 1e9, nil
}

// elements is the length of each of arrays float64 arrays in bytes, and the
// thread count to use.
func elements(bytes, arrays, threads int) (int, int, error) {
	if bytes == 0 {
		bytes = DefaultBytes
	}
	if bytes < MinBytes || bytes > MaxBytes {
		return 0, 0, fmt.Errorf("%w: %d bytes, want %d to %d", ErrArgs, bytes, MinBytes, MaxBytes)
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	n := bytes / (8 * arrays)
	if threads > n/1024 {
		return 0, 0, fmt.Errorf("%w: %d threads for %d elements", ErrArgs, threads, n)
	}
	return n, threads, nil
}

// triad is STREAM's kernel, a[i] = b[i] + s·c[i].
func triad(a, b, c []float64, s float64) {
	b, c = b[:len(a)], c[:len(a)]
	for i := range a {
		a[i] = b[i] + s*c[i]
	}
}

// sum adds x in eight independent chains, so the loads, not the adder's
// latency, set the pace.
func sum(x []float64) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		y := x[i : i+8 : i+8]
		s0 += y[0]
		s1 += y[1]
		s2 += y[2]
		s3 += y[3]
		s4 += y[4]
		s5 += y[5]
		s6 += y[6]
		s7 += y[7]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// workers is one goroutine per part, each locked to its own OS thread for
// the whole measurement, released together for every pass.
type workers struct {
	parts int
	start []chan func(p, lo, hi int)
	done  sync.WaitGroup
}

func newWorkers(parts, n int) *workers {
	w := &workers{parts: parts, start: make([]chan func(p, lo, hi int), parts)}
	for p := range parts {
		w.start[p] = make(chan func(p, lo, hi int))
		lo, hi := p*n/parts, (p+1)*n/parts
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for f := range w.start[p] {
				f(p, lo, hi)
				w.done.Done()
			}
		}()
	}
	return w
}

// run runs f on every part at once and returns when all are done.
func (w *workers) run(f func(p, lo, hi int)) {
	w.done.Add(w.parts)
	for _, c := range w.start {
		c <- f
	}
	w.done.Wait()
}

// best times repetitions passes of f and returns the shortest in seconds.
func (w *workers) best(ctx context.Context, f func(p, lo, hi int)) (float64, error) {
	best := math.Inf(1)
	for range repetitions {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t := time.Now()
		w.run(f)
		best = min(best, time.Since(t).Seconds())
	}
	return best, nil
}

func (w *workers) stop() {
	for _, c := range w.start {
		close(c)
	}
}
