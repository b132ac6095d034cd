package lwepir

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// The ring stage over diagonals read in place, in pieces of any length
// down to one below the multiply block, gives the hint ciphertexts of the
// whole-diagonal path bit for bit, for layouts with and without giant
// steps and with two outputs.
func TestInPlaceHintEqualsWholeDiagonals(t *testing.T) {
	p := Test()
	n := p.N()
	for _, shape := range []Shape{
		{Rows: 512, Cols: 2 * n, RecordSize: 64},           // B1·B2 = 256: giant steps
		{Rows: 2 * p.HintSlots(), Cols: n, RecordSize: 16}, // two outputs
		{Rows: 4, Cols: n, RecordSize: 4},                  // one diagonal
	} {
		tiles, _ := testDB(t, p, shape)
		pp := newPIR(t, p, shape, tiles)
		diags, evk, srv := pp.diags, pp.evk, pp.srv
		q, _, err := pp.cl.Query(1)
		if err != nil {
			t.Fatal(err)
		}
		want, err := srv.EvaluateHint(context.Background(), evk, q.Secret, diags, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range []int{p.HintSlots(), inPlaceBlock, inPlaceBlock / 2, 64} {
			t.Run(fmt.Sprintf("%dx%d/%d", shape.Rows, shape.Cols, piece), func(t *testing.T) {
				in := MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: piece}
				got, err := srv.EvaluateHint(context.Background(), evk, q.Secret, in, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%d outputs, want %d", len(got), len(want))
				}
				for i := range want {
					if !got[i].Value[0].Equal(&want[i].Value[0]) || !got[i].Value[1].Equal(&want[i].Value[1]) {
						t.Fatalf("output %d differs from the whole-diagonal path", i)
					}
				}
			})
		}
	}
}

// Pieces that do not cover a diagonal's slots are refused by name.
func TestInPlaceRefusesRaggedPieces(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 512, Cols: 2 * p.N(), RecordSize: 64}
	tiles, _ := testDB(t, p, shape)
	pp := newPIR(t, p, shape, tiles)
	diags, evk, srv := pp.diags, pp.evk, pp.srv
	q, _, err := pp.cl.Query(0)
	if err != nil {
		t.Fatal(err)
	}
	short := raggedPieces{MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: 64}}
	if _, err := srv.EvaluateHint(context.Background(), evk, q.Secret, short, nil); err == nil {
		t.Fatal("a diagonal missing its last piece was multiplied")
	}
}

type raggedPieces struct{ MemPieces }

func (r raggedPieces) DiagonalPieces(ctx context.Context, i, l int) ([][]uint64, error) {
	ps, err := r.MemPieces.DiagonalPieces(ctx, i, l)
	if i == 5 && len(ps) > 1 {
		ps = ps[:len(ps)-1]
	}
	return ps, err
}

// The server's Guard runs every step of the ring stage, and an error it
// returns (what a device's guard makes of a fault in a mapped page) ends
// the stage with that error.
func TestRingStageGuard(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 512, Cols: 2 * p.N(), RecordSize: 64}
	tiles, _ := testDB(t, p, shape)
	pp := newPIR(t, p, shape, tiles)
	q, _, err := pp.cl.Query(1)
	if err != nil {
		t.Fatal(err)
	}
	in := MemPieces{MemDiagonals: pp.diags, Limbs: len(p.HintLogQ), Piece: 64}
	var mu sync.Mutex
	steps := 0
	pp.srv.Guard = func(f func() error) error {
		mu.Lock()
		steps++
		mu.Unlock()
		return f()
	}
	pp.srv.Workers = 2
	if _, err := pp.srv.EvaluateHint(context.Background(), pp.evk, q.Secret, in, nil); err != nil || steps == 0 {
		t.Fatalf("%v after %d guarded steps", err, steps)
	}
	errFault := errors.New("a fault")
	pp.srv.Guard = func(func() error) error { return errFault }
	if _, err := pp.srv.EvaluateHint(context.Background(), pp.evk, q.Secret, in, nil); !errors.Is(err, errFault) {
		t.Fatalf("%v, want the guard's error", err)
	}
}
