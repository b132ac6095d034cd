package lwepir_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// syntheticHint is a uniformly random H' of shape's rows: the hint of a
// database is pseudo-random modulo 2^32 (see syntheticDiagonals).
func syntheticHint(p lwepir.Params, shape lwepir.Shape) []uint32 {
	raw := make([]byte, 4*shape.Rows*p.N())
	rand.Read(raw)
	h := make([]uint32, shape.Rows*p.N())
	for i := range h {
		h[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return h
}

// BenchmarkPackVsRingStage1GiB runs, in one process, the ring stage at the
// 1 GiB layout (2048 rows; the device's rotator, without and with hoisting
// keys; a batch of one) beside the packed mode's server work per query at
// the layouts of a 1 GiB database of 2048, 4096 and 8192 rows (2^19, 2^18,
// 2^17 columns): Pack (Prepare and Finish) for one query on one goroutine,
// and Prepare for a batch of 16 on every core. It reports CPU a query,
// the precomputation's time and size, and the bytes a query sends (its
// vector and, per query, its packing keys, or once a client, the ring
// stage's Galois keys) and receives. The scan (D·q) is the same in both
// modes and not included.
func BenchmarkPackVsRingStage1GiB(b *testing.B) {
	ctx := context.Background()
	p, shape := gibShape(b)
	diags := syntheticDiagonals(b, p, shape)
	var seed [lwepir.SeedSize]byte
	l := shape.Layout(p)
	sk, evk, err := lwepir.GenerateKeys(p, shape)
	if err != nil {
		b.Fatal(err)
	}
	hoisting, err := sk.EvalKeys(p, append(l.Rotations(), l.HoistRotations()...))
	if err != nil {
		b.Fatal(err)
	}
	cl, _ := lwepir.NewClient(p, shape, seed, sk)
	q, _, err := cl.Query(3)
	if err != nil {
		b.Fatal(err)
	}
	srv, _ := lwepir.NewServer(p, shape)
	srv.Rotations = engineRotations
	ringUp := 4*shape.Cols + len(lwepir.MarshalCiphertext(q.Secret))
	hint, err := srv.EvaluateHint(ctx, evk, q.Secret, diags, nil)
	if err != nil {
		b.Fatal(err)
	}
	ringDown := 4 * shape.Rows
	for _, ct := range hint {
		ringDown += len(lwepir.MarshalCiphertext(ct))
	}
	for _, c := range []struct {
		name string
		keys *lwepir.EvalKeys
	}{{"new", evk}, {"hoisted", hoisting}} {
		keyBytes := len(c.keys.Rotations) * lwepir.GaloisKeyBytes(p)
		b.Run("ring/"+c.name+"/rows2048/batch1", func(b *testing.B) {
			perQuery(b, 1, func() {
				if _, err := srv.EvaluateHint(ctx, c.keys, q.Secret, diags, nil); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(ringUp), "up-B/query")
			b.ReportMetric(float64(keyBytes), "keys-B/client")
			b.ReportMetric(float64(ringDown), "down-B/query")
		})
	}
	diags = lwepir.MemPieces{}
	runtime.GC()

	for _, rows := range []int{2048, 4096, 8192} {
		shape := lwepir.Shape{Rows: rows, Cols: (1 << 30) / rows, RecordSize: 256}
		h := syntheticHint(p, shape)
		start, cpu := time.Now(), cpuTime()
		pk, err := lwepir.NewPacker(ctx, p, shape, seed, h)
		if err != nil {
			b.Fatal(err)
		}
		preWall, preCPU := time.Since(start), cpuTime()-cpu
		h = nil
		pc, err := lwepir.NewPackedClient(p, shape, seed)
		if err != nil {
			b.Fatal(err)
		}
		const batch = 16
		keys := make([]*lwepir.PackingKeys, batch)
		var vec []uint32
		for i := range keys {
			pq, _, err := pc.PackedQuery(i)
			if err != nil {
				b.Fatal(err)
			}
			keys[i], vec = pq.Keys, pq.Vector
		}
		column := make([]uint32, rows)
		up := 4*shape.Cols + lwepir.PackingKeysBytes(p)
		down := lwepir.PackedAnswerBytes(p, shape)
		report := func(b *testing.B) {
			b.ReportMetric(float64(up), "up-B/query")
			b.ReportMetric(float64(down), "down-B/query")
			b.ReportMetric(float64(pk.PrecomputedBytes())/(1<<20), "precomp-MiB")
			b.ReportMetric(preWall.Seconds(), "precomp-wall-s")
			b.ReportMetric(preCPU.Seconds(), "precomp-cpu-s")
		}
		name := fmt.Sprintf("pack/rows%d", rows)
		b.Run(name+"/batch1", func(b *testing.B) {
			perQuery(b, 1, func() {
				preps, err := pk.Prepare(ctx, keys[:1], 1, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := pk.Finish(preps[0], lwepir.SumQuery(vec), column); err != nil {
					b.Fatal(err)
				}
			})
			report(b)
		})
		b.Run(name+"/batch16", func(b *testing.B) {
			perQuery(b, batch, func() {
				preps, err := pk.Prepare(ctx, keys, 0, nil)
				if err != nil {
					b.Fatal(err)
				}
				for _, pr := range preps {
					if _, err := pk.Finish(pr, lwepir.SumQuery(vec), column); err != nil {
						b.Fatal(err)
					}
				}
			})
			report(b)
		})
		pk = nil
		runtime.GC()
	}
}

// BenchmarkPackedClient1GiB times a packed-mode client's work a query at
// the 1 GiB layouts: building the query (its vector and its packing keys)
// and decoding an answer.
func BenchmarkPackedClient1GiB(b *testing.B) {
	p := lwepir.Default()
	var seed [lwepir.SeedSize]byte
	for _, rows := range []int{2048, 8192} {
		shape := lwepir.Shape{Rows: rows, Cols: (1 << 30) / rows, RecordSize: 256}
		cl, err := lwepir.NewPackedClient(p, shape, seed)
		if err != nil {
			b.Fatal(err)
		}
		_, st, err := cl.PackedQuery(0)
		if err != nil {
			b.Fatal(err)
		}
		n := p.N()
		packs := (rows + n - 1) / n
		ans := &lwepir.PackedAnswer{A: make([][]uint32, packs), B: make([][]uint32, packs)}
		for k := range packs {
			ans.A[k], ans.B[k] = make([]uint32, n), make([]uint32, n)
		}
		b.Run(fmt.Sprintf("rows%d/query", rows), func(b *testing.B) {
			perQuery(b, 1, func() {
				if _, _, err := cl.PackedQuery(5); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("rows%d/decode", rows), func(b *testing.B) {
			perQuery(b, 1, func() {
				if _, err := cl.DecodePacked(st, ans); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkPackedAnswerBatch1GiB answers batches of 1 and 16 packed-mode
// queries over a 1 GiB database in memory at 2048 rows, as
// BenchmarkAnswerBatch1GiB does for the ring stage: one scan pass for the
// batch, the batch's packing (Prepare, one goroutine) beside it, then
// each answer's Finish; beside it, the same scan alone. The hint is synthetic (see syntheticHint): the
// packing's cost does not depend on its values.
func BenchmarkPackedAnswerBatch1GiB(b *testing.B) {
	ctx := context.Background()
	p, shape := gibShape(b)
	tiles := make(lwepir.MemTiles, shape.Tiles(p))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(p))
		rand.Read(tiles[k])
	}
	var seed [lwepir.SeedSize]byte
	pk, err := lwepir.NewPacker(ctx, p, shape, seed, syntheticHint(p, shape))
	if err != nil {
		b.Fatal(err)
	}
	pc, err := lwepir.NewPackedClient(p, shape, seed)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 16
	keys := make([]*lwepir.PackingKeys, batch)
	qs := make([]*matvec.Query, batch)
	sums := make([]uint32, batch)
	for i := range keys {
		q, _, err := pc.PackedQuery(3 + i)
		if err != nil {
			b.Fatal(err)
		}
		keys[i], qs[i], sums[i] = q.Keys, matvec.NewQuery(q.Vector), lwepir.SumQuery(q.Vector)
	}
	srv, _ := lwepir.NewServer(p, shape)
	for _, n := range []int{1, batch} {
		// The same scan alone: SimplePIR's mode (a downloaded hint), the
		// fixed cost's baseline.
		b.Run(fmt.Sprintf("scan-only/batch%d", n), func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if _, err := srv.Scan(ctx, qs[:n], tiles, nil); err != nil {
					b.Fatal(err)
				}
			}
			q := float64(b.N * n)
			b.ReportMetric(q/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/q, "cpu-ms/query")
			b.ReportMetric(0, "ns/op")
		})
		b.Run(fmt.Sprintf("packed/batch%d", n), func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				var preps []*lwepir.Prepared
				var perr error
				var wg sync.WaitGroup
				wg.Go(func() { preps, perr = pk.Prepare(ctx, keys[:n], 1, nil) })
				cols, err := srv.Scan(ctx, qs[:n], tiles, nil)
				wg.Wait()
				if err != nil || perr != nil {
					b.Fatal(err, perr)
				}
				for i := range n {
					if _, err := pk.Finish(preps[i], sums[i], cols[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			q := float64(b.N * n)
			b.ReportMetric(q/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/q, "cpu-ms/query")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkPackingKeys times one query's packing keys: made (with its
// vector, at a one-tile shape so the vector costs little), encoded by the
// client and decoded by the device, the default parameters under each
// packing version.
func BenchmarkPackingKeys(b *testing.B) {
	for _, v := range []lwepir.PackVersion{lwepir.PackV1, lwepir.PackV2} {
		p, err := lwepir.Default().WithPacking(v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("v%d", v), func(b *testing.B) { benchPackingKeys(b, p) })
	}
}

func benchPackingKeys(b *testing.B, p lwepir.Params) {
	shape := lwepir.Shape{Rows: p.N(), Cols: p.N(), RecordSize: 256}
	var seed [lwepir.SeedSize]byte
	cl, err := lwepir.NewPackedClient(p, shape, seed)
	if err != nil {
		b.Fatal(err)
	}
	q, _, err := cl.PackedQuery(0)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := lwepir.MarshalPackingKeys(p, q.Keys)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(raw)), "key-bytes")
	b.Run("make", func(b *testing.B) {
		perQuery(b, 1, func() {
			if _, _, err := cl.PackedQuery(1); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("encode", func(b *testing.B) {
		perQuery(b, 1, func() {
			if _, err := lwepir.MarshalPackingKeys(p, q.Keys); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("decode", func(b *testing.B) {
		perQuery(b, 1, func() {
			if _, err := lwepir.UnmarshalPackingKeys(p, raw); err != nil {
				b.Fatal(err)
			}
		})
	})
}
