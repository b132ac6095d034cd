package lwepir_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// gibShape is the shape NewShape gives a 1 GiB database of 256-byte
// records at the default parameters: 2048 rows × 2^19 columns (layout:
// one output, R = 512, B1 = 32, B2 = 16).
func gibShape(b *testing.B) (lwepir.Params, lwepir.Shape) {
	p := lwepir.Default()
	shape, err := lwepir.NewShape(p, 1<<30/256, 256)
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

// BenchmarkRingStage1GiB times the ring stage of one query at the 1 GiB
// shape, with the device's rotator, one core.
func BenchmarkRingStage1GiB(b *testing.B) {
	p, shape := gibShape(b)
	diags := syntheticDiagonals(b, p, shape)
	var seed [lwepir.SeedSize]byte
	sk, evk, err := lwepir.GenerateKeys(p, shape)
	if err != nil {
		b.Fatal(err)
	}
	cl, _ := lwepir.NewClient(p, shape, seed, sk)
	q, _, err := cl.Query(3)
	if err != nil {
		b.Fatal(err)
	}
	for _, rot := range []struct {
		name string
		f    func(bgv.Parameters, *lwepir.EvalKeys) (lwepir.Rotator, error)
	}{{"engine", engineRotations}, {"lattigo", nil}} {
		b.Run(rot.name, func(b *testing.B) {
			srv, _ := lwepir.NewServer(p, shape)
			if rot.f != nil {
				srv.Rotations = rot.f
			}
			for b.Loop() {
				if _, err := srv.EvaluateHint(context.Background(), evk, q.Secret, diags, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClient1GiB times the client's per-query work at the 1 GiB
// shape: building a query (after the first, which expands the public
// matrix) and decoding an answer.
func BenchmarkClient1GiB(b *testing.B) {
	p, shape := gibShape(b)
	var seed [lwepir.SeedSize]byte
	sk, _, _ := lwepir.GenerateKeys(p, shape)
	cl, _ := lwepir.NewClient(p, shape, seed, sk)
	if _, _, err := cl.Query(0); err != nil {
		b.Fatal(err)
	}
	b.Run("query", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := cl.Query(5); err != nil {
				b.Fatal(err)
			}
		}
	})
}
