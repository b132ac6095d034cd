package matvec

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// reference is the definition: acc[i] += Σ_j tile[i·cols + j] · q[off+j]
// (mod 2^32), one row at a time.
func reference(acc []uint32, tile []byte, q []uint32, off int) {
	cols := len(tile) / len(acc)
	for i := range acc {
		for j := 0; j < cols; j++ {
			acc[i] += uint32(tile[i*cols+j]) * q[off+j]
		}
	}
}

// withKernel runs f with k as the selected kernel, then restores it.
func withKernel(t testing.TB, k kernel, f func()) {
	t.Helper()
	saved := active
	active = k
	defer func() { active = saved }()
	f()
}

// edgeWords are query words whose digits sit on the decompositions' carries
// and ends.
var edgeWords = []uint32{0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7f7f7f7f, 0x80808080,
	0x807f807f, 0x7fffffff, 0x80000000, 0x80000001, 0xff7fff80, 0xfffffffe, 0xffffffff}

// fill returns n words: random, or for mode 1 all 2^32−1, for mode 2 the
// edge words in turn, for mode 3 zeros.
func fillWords(rng *rand.Rand, n, mode int) []uint32 {
	q := make([]uint32, n)
	for i := range q {
		switch mode {
		case 0:
			q[i] = rng.Uint32()
		case 1:
			q[i] = 0xffffffff
		case 2:
			q[i] = edgeWords[i%len(edgeWords)]
		}
	}
	return q
}

// fillBytes returns n matrix bytes: random, all 255, or 0 and 255 in turn.
func fillBytes(rng *rand.Rand, n, mode int) []byte {
	t := make([]byte, n)
	for i := range t {
		switch mode {
		case 0:
			t[i] = byte(rng.Uint32())
		case 1:
			t[i] = 255
		case 2:
			t[i] = byte(255 * (i & 1))
		}
	}
	return t
}

func TestDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := append([]uint32(nil), edgeWords...)
	for range 100000 {
		words = append(words, rng.Uint32())
	}
	for _, v := range words {
		d := digits8(v)
		var back uint32
		for k := 3; k >= 0; k-- {
			back = back<<8 + uint32(int32(d[k]))
		}
		if back != v {
			t.Fatalf("digits8(%#x) = %v, recombined %#x", v, d, back)
		}
		d0, d1 := digits16(v)
		if got := uint32(int32(d0)) + uint32(int32(d1))<<16; got != v {
			t.Fatalf("digits16(%#x) = %d, %d, recombined %#x", v, d0, d1, got)
		}
		// The bias gives the digits of the borrow-propagating split.
		r, x := [4]int8{}, v
		for k := range r {
			r[k] = int8(uint8(x))
			x = (x - uint32(int32(r[k]))) >> 8
		}
		if r != d {
			t.Fatalf("digits8(%#x) = %v, the split gives %v", v, d, r)
		}
		if r0 := int16(uint16(v)); r0 != d0 || int16(uint16((v-uint32(int32(r0)))>>16)) != d1 {
			t.Fatalf("digits16(%#x) = %d, %d: not the split's", v, d0, d1)
		}
	}
}

func TestKernelsListed(t *testing.T) {
	ks := kernels()
	if ks[0] != kernelGo || active != ks[len(ks)-1] {
		t.Fatalf("kernels %v, active %v", ks, active)
	}
	if Kernel() != active.String() {
		t.Fatalf("Kernel() = %q, active %v", Kernel(), active)
	}
	t.Logf("kernels on this CPU: %v", ks)
}

// TestMulAddShapes compares every kernel with the reference over shapes
// with and without the vector kernels' tails (rows not in fours, columns
// not in 64s), offsets odd and even, edge and random data, on accumulators
// that start nonzero.
func TestMulAddShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type shape struct{ rows, cols, off, n int }
	var shapes []shape
	for _, rows := range []int{1, 3, 4, 5, 8, 17} {
		for _, cols := range []int{0, 1, 63, 64, 65, 128, 192, 320, 1000} {
			for _, off := range []int{0, 1, 7, 64} {
				shapes = append(shapes, shape{rows, cols, off, off + cols + rng.IntN(3)})
			}
		}
	}
	shapes = append(shapes, shape{64, 4096, 3, 4099}, shape{8, 2048, 2048, 4096})
	// A single query over rows of 1024 columns and more reads them row by
	// row: an odd number of 64s, a tail, rows not in fours.
	shapes = append(shapes, shape{5, 1088, 1, 1090}, shape{3, 1100, 7, 1110}, shape{1, 1024, 0, 1024})
	for _, k := range kernels() {
		for mode := range 4 {
			for _, s := range shapes {
				vals := fillWords(rng, s.n, mode)
				tile := fillBytes(rng, s.rows*s.cols, mode%3)
				want := fillWords(rng, s.rows, 0)
				got := slices.Clone(want)
				reference(want, tile, vals, s.off)
				withKernel(t, k, func() { MulAdd(got, tile, NewQuery(vals), s.off) })
				if !slices.Equal(got, want) {
					t.Fatalf("%v, data %d, %d×%d at %d: got %x, want %x", k, mode, s.rows, s.cols, s.off, got[:min(4, len(got))], want[:min(4, len(want))])
				}
			}
		}
	}
}

// TestMulAddBatch checks batches against the reference, including one
// large enough (64 queries, 2048 columns, 130 rows) that the vector kernels
// split the matrix into column and row blocks, and small batches over rows
// wider than an LWE tile's, with a tail of columns.
func TestMulAddBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct{ nq, rows, cols, off int }{
		{1, 8, 256, 5}, {2, 9, 128, 0}, {3, 12, 64, 1}, {8, 16, 512, 33}, {9, 7, 100, 2}, {17, 20, 640, 64}, {64, 130, 2048, 1},
		{2, 12, 4096 + 96, 3}, {5, 9, 6208, 0},
	}
	for _, k := range kernels() {
		for _, c := range cases {
			tile := fillBytes(rng, c.rows*c.cols, 0)
			accs, want := make([][]uint32, c.nq), make([][]uint32, c.nq)
			qs := make([]*Query, c.nq)
			for b := range c.nq {
				vals := fillWords(rng, c.off+c.cols+b, b%3)
				want[b] = fillWords(rng, c.rows, 0)
				accs[b] = slices.Clone(want[b])
				reference(want[b], tile, vals, c.off)
				withKernel(t, k, func() { qs[b] = NewQuery(vals) })
			}
			MulAddBatch(accs, tile, qs, c.off)
			for b := range accs {
				if !slices.Equal(accs[b], want[b]) {
					t.Fatalf("%v, %d queries of %d×%d at %d: query %d differs", k, c.nq, c.rows, c.cols, c.off, b)
				}
			}
		}
	}
}

// TestMulAddBatchMixed: queries prepared for different kernels in one batch
// are each answered by their own.
func TestMulAddBatchMixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ks := kernels()
	rows, cols, off := 9, 192, 3
	tile := fillBytes(rng, rows*cols, 0)
	var accs, want [][]uint32
	var qs []*Query
	for i := range 2 * len(ks) {
		vals := fillWords(rng, off+cols, 0)
		w := make([]uint32, rows)
		reference(w, tile, vals, off)
		want = append(want, w)
		accs = append(accs, make([]uint32, rows))
		withKernel(t, ks[i%len(ks)], func() { qs = append(qs, NewQuery(vals)) })
	}
	MulAddBatch(accs, tile, qs, off)
	for b := range accs {
		if !slices.Equal(accs[b], want[b]) {
			t.Fatalf("query %d (%v) differs", b, qs[b].kind)
		}
	}
}

func TestCheck(t *testing.T) {
	q := NewQuery(make([]uint32, 100))
	bad := []struct{ rows, tileLen, off int }{
		{0, 64, 0}, {-1, 64, 0}, {3, 64, 0}, {1, 101, 0}, {1, 64, 37}, {1, 64, -1}, {2, 0, 101},
	}
	for _, c := range bad {
		if err := Check(c.rows, c.tileLen, q, c.off); !errors.Is(err, ErrShape) {
			t.Errorf("Check(%d, %d, q[100], %d) = %v, want ErrShape", c.rows, c.tileLen, c.off, err)
		}
	}
	if err := Check(1, 64, nil, 0); !errors.Is(err, ErrShape) {
		t.Errorf("Check with no query = %v", err)
	}
	for _, c := range []struct{ rows, tileLen, off int }{{1, 100, 0}, {2, 128, 36}, {4, 0, 100}} {
		if err := Check(c.rows, c.tileLen, q, c.off); err != nil {
			t.Errorf("Check(%d, %d, q[100], %d) = %v", c.rows, c.tileLen, c.off, err)
		}
	}
}

// TestMulAddRejects: a shape Check rejects panics with its error before any
// kernel reads (the assembly would read past the query).
func TestMulAddRejects(t *testing.T) {
	for _, k := range kernels() {
		withKernel(t, k, func() {
			q := NewQuery(make([]uint32, 128))
			acc := make([]uint32, 4)
			for _, off := range []int{65, -1} {
				func() {
					defer func() {
						err, _ := recover().(error)
						if !errors.Is(err, ErrShape) {
							t.Errorf("%v: MulAdd at offset %d recovered %v, want ErrShape", k, off, err)
						}
					}()
					MulAdd(acc, make([]byte, 4*64), q, off)
				}()
			}
		})
	}
}

func FuzzMulAdd(f *testing.F) {
	f.Add([]byte{255, 0, 1, 128}, uint8(1), uint8(0), uint64(1))
	f.Add(make([]byte, 5*130), uint8(5), uint8(3), uint64(0))
	f.Fuzz(func(t *testing.T, tile []byte, rows, off uint8, seed uint64) {
		if rows == 0 {
			return
		}
		tile = tile[:len(tile)-len(tile)%int(rows)]
		cols := len(tile) / int(rows)
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		vals := fillWords(rng, int(off)+cols, int(seed%3))
		want := make([]uint32, rows)
		reference(want, tile, vals, int(off))
		for _, k := range kernels() {
			got := make([]uint32, rows)
			withKernel(t, k, func() { MulAdd(got, tile, NewQuery(vals), int(off)) })
			if !slices.Equal(got, want) {
				t.Fatalf("%v: %d×%d at %d differs", k, rows, cols, off)
			}
		}
	})
}

// BenchmarkMulAdd measures every kernel in GB/s of matrix bytes for 1, 4,
// 16 and 64 queries: "cache" a 2 MiB tile (8192 × 256) read again and again,
// "stream" 256 MiB (sixteen 8192 × 2048 tiles, as a first dimension sweeps a
// stored matrix) read from memory each time. Beside the mean (MB/s, and
// query-GB/s counting every query's pass) it reports the best pass
// (best-GB/s), as STREAM does, which a machine shared with other jobs
// disturbs least.
func BenchmarkMulAdd(b *testing.B) {
	const rows = 8192
	type layout struct {
		name        string
		cols, tiles int
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, lay := range []layout{{"cache", 256, 1}, {"stream", 2048, 16}} {
		tile := fillBytes(rng, rows*lay.cols*lay.tiles, 0)
		n := lay.cols * lay.tiles
		for _, k := range kernels() {
			for _, nq := range []int{1, 4, 16, 64} {
				b.Run(fmt.Sprintf("%s/%v/batch=%d", lay.name, k, nq), func(b *testing.B) {
					accs := make([][]uint32, nq)
					qs := make([]*Query, nq)
					for i := range nq {
						accs[i] = make([]uint32, rows)
						withKernel(b, k, func() { qs[i] = NewQuery(fillWords(rng, n, 0)) })
					}
					size := rows * lay.cols
					b.SetBytes(int64(len(tile)))
					b.ResetTimer()
					best := time.Duration(math.MaxInt64)
					for range b.N {
						start := time.Now()
						for t := range lay.tiles {
							MulAddBatch(accs, tile[t*size:(t+1)*size], qs, t*lay.cols)
						}
						best = min(best, time.Since(start))
					}
					b.ReportMetric(float64(nq)*float64(len(tile))*float64(b.N)/b.Elapsed().Seconds()/1e9, "query-GB/s")
					b.ReportMetric(float64(len(tile))/best.Seconds()/1e9, "best-GB/s")
				})
			}
		}
	}
}

// BenchmarkMulAddCores streams the same 256 MiB with the active kernel on
// every core (GOMAXPROCS goroutines, each its own range of rows of every
// tile, as a server splits a scan), for 1 and 16 queries.
func BenchmarkMulAddCores(b *testing.B) {
	const rows, cols, tiles = 8192, 2048, 16
	rng := rand.New(rand.NewPCG(11, 12))
	tile := fillBytes(rng, rows*cols*tiles, 0)
	workers := runtime.GOMAXPROCS(0)
	for _, nq := range []int{1, 16} {
		b.Run(fmt.Sprintf("%v/cores=%d/batch=%d", active, workers, nq), func(b *testing.B) {
			qs := make([]*Query, nq)
			for i := range qs {
				qs[i] = NewQuery(fillWords(rng, cols*tiles, 0))
			}
			accs := make([][][]uint32, workers)
			for w := range accs {
				accs[w] = make([][]uint32, nq)
				for i := range nq {
					accs[w][i] = make([]uint32, rows)
				}
			}
			size := rows * cols
			b.SetBytes(int64(len(tile)))
			b.ResetTimer()
			best := time.Duration(math.MaxInt64)
			for range b.N {
				start := time.Now()
				var wg sync.WaitGroup
				for w := range workers {
					lo, hi := w*rows/workers, (w+1)*rows/workers
					wg.Go(func() {
						part := make([][]uint32, nq)
						for i := range part {
							part[i] = accs[w][i][lo:hi]
						}
						for t := range tiles {
							MulAddBatch(part, tile[t*size+lo*cols:t*size+hi*cols], qs, t*cols)
						}
					})
				}
				wg.Wait()
				best = min(best, time.Since(start))
			}
			b.ReportMetric(float64(nq)*float64(len(tile))*float64(b.N)/b.Elapsed().Seconds()/1e9, "query-GB/s")
			b.ReportMetric(float64(len(tile))/best.Seconds()/1e9, "best-GB/s")
		})
	}
}

// BenchmarkNewQuery times splitting a query of 2^18 words (1 GiB at 4096
// rows) in the active kernel's digit planes: a device pays it every query.
func BenchmarkNewQuery(b *testing.B) {
	q := make([]uint32, 1<<18)
	for i := range q {
		q[i] = uint32(i) * 2654435761
	}
	for b.Loop() {
		_ = NewQuery(q)
	}
}
