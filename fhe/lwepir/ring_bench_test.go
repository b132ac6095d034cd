package lwepir_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// gibShape is the shape NewShape gives a 1 GiB database of 256-byte
// records at the default parameters: 2048 rows × 2^19 columns (layout:
// one output, R = 512, B1 = 32, B2 = 16).
func gibShape(b *testing.B) (lwepir.Params, lwepir.Shape) { return dbShape(b, 1<<30) }

// dbShape is the shape NewShape gives a database of size bytes in 256-byte
// records (4 GiB: 8192 rows × 2^19 columns; R = 2048, B1 = 64, B2 = 32).
func dbShape(b *testing.B, size int) (lwepir.Params, lwepir.Shape) {
	p := lwepir.Default()
	shape, err := lwepir.NewShape(p, size/256, 256)
	if err != nil {
		b.Fatal(err)
	}
	return p, shape
}

// syntheticDiagonals encodes a uniformly random H' of shape's rows (the
// hint of a database is pseudo-random modulo 2^32, so this is its
// distribution) without computing it from 1 GiB of tiles; the diagonals
// are read in place in 512-word pieces, as a store's mapped pages are.
func syntheticDiagonals(b *testing.B, p lwepir.Params, shape lwepir.Shape) lwepir.MemPieces {
	raw := make([]byte, 4*shape.Rows*p.N())
	rand.Read(raw)
	h := make([]uint32, shape.Rows*p.N())
	for i := range h {
		h[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	diags := make(lwepir.MemDiagonals, lwepir.DiagonalCount(p, shape))
	if err := lwepir.EncodeDiagonals(p, shape, h, func(i int, w []uint64) error {
		diags[i] = append([]uint64(nil), w...)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return lwepir.MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: 512}
}

// engineRotations is the device's Rotations: the engine's interpreter.
func engineRotations(bp bgv.Parameters, keys *lwepir.EvalKeys) (lwepir.Rotator, error) {
	return engine.NewRotator(bp, keys.Rotations), nil
}

// cpuTime is the process's user and system time so far: the core-seconds
// every goroutine of a benchmark spent, whatever else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perQuery reports a loop's wall and CPU time per query.
func perQuery(b *testing.B, queries int, body func()) {
	cpu := cpuTime()
	for b.Loop() {
		body()
	}
	n := float64(b.N * queries)
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/n, "wall-ms/query")
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/n, "cpu-ms/query")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRingStage1GiB times the ring stage per query at the 1 GiB
// shape, old (the path before batching, one query at a time; in a batch,
// queries side by side on Workers goroutines as the device runs them) and
// new (EvaluateHint; EvaluateHintBatch), for batches of 1 and 16 queries
// of 16 clients, with the device's rotator and Lattigo's; "hoisted" is new
// with clients' keys that include Layout.HoistRotations. The diagonals
// are synthetic (see syntheticDiagonals). Each query's results are the
// same bit for bit on both paths (TestBatchHintEqualsOldPath).
func BenchmarkRingStage1GiB(b *testing.B) {
	p, shape := gibShape(b)
	benchRingStage(b, p, shape, 16, []string{"engine", "lattigo"})
}

// BenchmarkRingStage4GiB is BenchmarkRingStage1GiB at the 4 GiB shape
// (512 MiB of diagonals), the device's rotator only; the hoisting keys
// (62 more a client) are 4 clients' taken in turn.
func BenchmarkRingStage4GiB(b *testing.B) {
	p, shape := dbShape(b, 1<<32)
	benchRingStage(b, p, shape, 4, []string{"engine"})
}

// benchRingStage times the ring stage at shape with the named rotators;
// hoistClients distinct clients hold hoisting keys.
func benchRingStage(b *testing.B, p lwepir.Params, shape lwepir.Shape, hoistClients int, rotators []string) {
	diags := syntheticDiagonals(b, p, shape)
	var seed [lwepir.SeedSize]byte
	const batch = 16
	keys := make([]*lwepir.EvalKeys, batch)
	hoisting := make([]*lwepir.EvalKeys, batch) // with Layout.HoistRotations
	xs := make([]*rlwe.Ciphertext, batch)
	l := shape.Layout(p)
	for i := range keys {
		sk, evk, err := lwepir.GenerateKeys(p, shape)
		if err != nil {
			b.Fatal(err)
		}
		if i < hoistClients {
			if hoisting[i], err = sk.EvalKeys(p, append(l.Rotations(), l.HoistRotations()...)); err != nil {
				b.Fatal(err)
			}
		} else {
			hoisting[i] = hoisting[i%hoistClients]
		}
		cl, _ := lwepir.NewClient(p, shape, seed, sk)
		q, _, err := cl.Query(3)
		if err != nil {
			b.Fatal(err)
		}
		keys[i], xs[i] = evk, q.Secret
	}
	for _, rot := range []struct {
		name string
		f    func(bgv.Parameters, *lwepir.EvalKeys) (lwepir.Rotator, error)
	}{{"engine", engineRotations}, {"lattigo", nil}} {
		if !slices.Contains(rotators, rot.name) {
			continue
		}
		srv, _ := lwepir.NewServer(p, shape)
		if rot.f != nil {
			srv.Rotations = rot.f
		}
		ctx := context.Background()
		check := func(err error) {
			if err != nil {
				b.Fatal(err)
			}
		}
		b.Run(rot.name+"/old/batch1", func(b *testing.B) {
			perQuery(b, 1, func() { _, err := srv.EvaluateHintOld(ctx, keys[0], xs[0], diags, nil); check(err) })
		})
		b.Run(rot.name+"/new/batch1", func(b *testing.B) {
			perQuery(b, 1, func() { _, err := srv.EvaluateHint(ctx, keys[0], xs[0], diags, nil); check(err) })
		})
		b.Run(rot.name+"/old/batch16", func(b *testing.B) {
			perQuery(b, batch, func() {
				var wg sync.WaitGroup
				for w := range srv.Workers {
					wg.Go(func() {
						for i := w; i < batch; i += srv.Workers {
							_, err := srv.EvaluateHintOld(ctx, keys[i], xs[i], diags, nil)
							check(err)
						}
					})
				}
				wg.Wait()
			})
		})
		b.Run(rot.name+"/new/batch16", func(b *testing.B) {
			perQuery(b, batch, func() { _, err := srv.EvaluateHintBatch(ctx, keys, xs, diags, nil); check(err) })
		})
		b.Run(rot.name+"/hoisted/batch1", func(b *testing.B) {
			perQuery(b, 1, func() { _, err := srv.EvaluateHint(ctx, hoisting[0], xs[0], diags, nil); check(err) })
		})
		b.Run(rot.name+"/hoisted/batch16", func(b *testing.B) {
			perQuery(b, batch, func() { _, err := srv.EvaluateHintBatch(ctx, hoisting, xs, diags, nil); check(err) })
		})
	}
}

// BenchmarkClient1GiB times the client's per-query work at the 1 GiB
// shape, one core: building a query (after the first, which expands the
// public matrix) and decoding an answer (its column and its hint
// ciphertext, from a real ring stage over synthetic diagonals).
func BenchmarkClient1GiB(b *testing.B) {
	p, shape := gibShape(b)
	var seed [lwepir.SeedSize]byte
	sk, evk, err := lwepir.GenerateKeys(p, shape)
	if err != nil {
		b.Fatal(err)
	}
	cl, _ := lwepir.NewClient(p, shape, seed, sk)
	q, st, err := cl.Query(0)
	if err != nil {
		b.Fatal(err)
	}
	srv, _ := lwepir.NewServer(p, shape)
	hint, err := srv.EvaluateHint(context.Background(), evk, q.Secret, syntheticDiagonals(b, p, shape), nil)
	if err != nil {
		b.Fatal(err)
	}
	ans := &lwepir.Answer{Column: make([]uint32, shape.Rows), Hint: hint}
	b.Run("query", func(b *testing.B) {
		perQuery(b, 1, func() {
			if _, _, err := cl.Query(5); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("decode", func(b *testing.B) {
		perQuery(b, 1, func() {
			if _, err := cl.Decode(st, ans); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkAnswerBatch1GiB answers batches of 1 and 16 queries over a
// 1 GiB database in memory, as the device does: one scan pass for the
// batch beside the ring stages, with the device's rotator; old (each
// query's ring stage on its own, two at a time), new (one
// EvaluateHintBatch on Workers goroutines, also for a batch of one) and
// hoisted (new, clients' keys with Layout.HoistRotations). It reports
// queries a second and CPU time a query; queries/s is the 2-core figure
// only on an otherwise idle machine.
func BenchmarkAnswerBatch1GiB(b *testing.B) {
	p, shape := gibShape(b)
	tiles := make(lwepir.MemTiles, shape.Tiles(p))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(p))
		rand.Read(tiles[k])
	}
	diags := syntheticDiagonals(b, p, shape)
	var seed [lwepir.SeedSize]byte
	const batch = 16
	keys := make([]*lwepir.EvalKeys, batch)
	hoisting := make([]*lwepir.EvalKeys, batch)
	xs := make([]*rlwe.Ciphertext, batch)
	qs := make([]*matvec.Query, batch)
	l := shape.Layout(p)
	for i := range keys {
		sk, evk, err := lwepir.GenerateKeys(p, shape)
		if err != nil {
			b.Fatal(err)
		}
		if hoisting[i], err = sk.EvalKeys(p, append(l.Rotations(), l.HoistRotations()...)); err != nil {
			b.Fatal(err)
		}
		cl, _ := lwepir.NewClient(p, shape, seed, sk)
		q, _, err := cl.Query(3 + i)
		if err != nil {
			b.Fatal(err)
		}
		keys[i], xs[i], qs[i] = evk, q.Secret, matvec.NewQuery(q.Vector)
	}
	srv, _ := lwepir.NewServer(p, shape)
	srv.Rotations = engineRotations
	ctx := context.Background()
	check := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	rings := map[string]func(n int){
		"old": func(n int) {
			var wg sync.WaitGroup
			for w := range min(n, srv.Workers) {
				wg.Go(func() {
					for i := w; i < n; i += srv.Workers {
						_, err := srv.EvaluateHintOld(ctx, keys[i], xs[i], diags, nil)
						check(err)
					}
				})
			}
			wg.Wait()
		},
		"new": func(n int) {
			_, err := srv.EvaluateHintBatch(ctx, keys[:n], xs[:n], diags, nil)
			check(err)
		},
		"hoisted": func(n int) {
			_, err := srv.EvaluateHintBatch(ctx, hoisting[:n], xs[:n], diags, nil)
			check(err)
		},
	}
	for _, path := range []string{"old", "new", "hoisted"} {
		for _, n := range []int{1, batch} {
			b.Run(fmt.Sprintf("%s/batch%d", path, n), func(b *testing.B) {
				cpu := cpuTime()
				for b.Loop() {
					var wg sync.WaitGroup
					wg.Go(func() { rings[path](n) })
					_, err := srv.Scan(ctx, qs[:n], tiles, nil)
					check(err)
					wg.Wait()
				}
				q := float64(b.N * n)
				b.ReportMetric(q/b.Elapsed().Seconds(), "queries/s")
				b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/q, "cpu-ms/query")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
