package lwepir

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// BenchmarkHintDefault measures the ring stage at the default parameters
// for one hint ciphertext (8192 rows): load-time preprocessing and the
// per-query evaluation of H·s.
func BenchmarkHintDefault(b *testing.B) {
	p := Default()
	shape := Shape{Rows: p.HintSlots(), Cols: p.N(), RecordSize: 256}
	tiles := MemTiles{make([]byte, shape.TileBytes(p))}
	rand.Read(tiles[0])
	var seed [SeedSize]byte
	start := time.Now()
	h, err := ComputeHint(context.Background(), p, shape, seed, tiles)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("ComputeHint (one tile of %d MiB): %v", shape.TileBytes(p)>>20, time.Since(start))
	start = time.Now()
	diags := make(MemDiagonals, DiagonalCount(p, shape))
	if err := EncodeDiagonals(p, shape, h, func(i int, w []uint64) error {
		diags[i] = append([]uint64(nil), w...)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.Logf("EncodeDiagonals: %v (%d MiB)", time.Since(start), len(diags)*len(diags[0])*8>>20)
	sk, evk, _ := GenerateKeys(p, shape)
	cl, _ := NewClient(p, shape, seed, sk)
	srv, _ := NewServer(p, shape)
	q, _, err := cl.Query(0)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := srv.EvaluateHint(context.Background(), evk, q.Secret, diags, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnswerParts times the scan and the ring stage of one query over
// a 64 MiB database at the default parameters.
func BenchmarkAnswerParts(b *testing.B) {
	p := Default()
	shape, err := NewShape(p, 1<<18, 256)
	if err != nil {
		b.Fatal(err)
	}
	tiles := make(MemTiles, shape.Tiles(p))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(p))
		rand.Read(tiles[k])
	}
	var seed [SeedSize]byte
	h, _ := ComputeHint(context.Background(), p, shape, seed, tiles)
	diags := make(MemDiagonals, DiagonalCount(p, shape))
	EncodeDiagonals(p, shape, h, func(i int, w []uint64) error { diags[i] = append([]uint64(nil), w...); return nil })
	sk, evk, _ := GenerateKeys(p, shape)
	cl, _ := NewClient(p, shape, seed, sk)
	srv, _ := NewServer(p, shape)
	q, _, _ := cl.Query(3)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(shape.Rows * shape.Cols))
		for i := 0; i < b.N; i++ {
			srv.Scan(context.Background(), []*matvec.Query{matvec.NewQuery(q.Vector)}, tiles, nil)
		}
	})
	b.Run("hint", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			srv.EvaluateHint(context.Background(), evk, q.Secret, diags, nil)
		}
	})
	b.Run("query", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cl.Query(3)
		}
	})
}
