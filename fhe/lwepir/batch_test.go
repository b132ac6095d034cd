package lwepir

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// A batch of queries from three clients (each its own keys) over one
// database: EvaluateHintBatch gives every query's hint ciphertexts bit for
// bit as the ring stage before batching (evaluateHintOld) gives them for
// that query alone, over whole diagonals and in place in pieces of several
// lengths, on one and on two workers; and each query, answered with the
// batched hint and a batched scan, decodes to its column of the database.
func TestBatchHintEqualsOldPath(t *testing.T) {
	p := Test()
	n := p.N()
	for _, shape := range []Shape{
		{Rows: 512, Cols: 2 * n, RecordSize: 64},           // B1·B2 = 256: giant steps
		{Rows: 2 * p.HintSlots(), Cols: n, RecordSize: 16}, // two outputs
		{Rows: 4, Cols: n, RecordSize: 4},                  // one diagonal
	} {
		tiles, cols := testDB(t, p, shape)
		var seed [SeedSize]byte
		if _, err := rand.Read(seed[:]); err != nil {
			t.Fatal(err)
		}
		diags := buildHint(t, p, shape, seed, tiles)
		srv, err := NewServer(p, shape)
		if err != nil {
			t.Fatal(err)
		}
		columns := []int{1, shape.Cols - 1, shape.Cols / 3}
		var (
			clients []*Client
			keys    []*EvalKeys
			secrets []*rlwe.Ciphertext
			qs      []*matvec.Query
			states  []*State
			want    [][]*rlwe.Ciphertext
		)
		for _, col := range columns {
			sk, evk, err := GenerateKeys(p, shape)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := NewClient(p, shape, seed, sk)
			if err != nil {
				t.Fatal(err)
			}
			q, st, err := cl.Query(col)
			if err != nil {
				t.Fatal(err)
			}
			old, err := srv.evaluateHintOld(context.Background(), evk, q.Secret, diags, nil)
			if err != nil {
				t.Fatal(err)
			}
			clients, keys, secrets, states = append(clients, cl), append(keys, evk), append(secrets, q.Secret), append(states, st)
			qs, want = append(qs, matvec.NewQuery(q.Vector)), append(want, old)
		}
		scanned, err := srv.Scan(context.Background(), qs, tiles, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range []struct {
			name  string
			diags Diagonals
		}{
			{"whole", diags},
			{"pieces-slots", MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: p.HintSlots()}},
			{"pieces-64", MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: 64}},
			{"pieces-256", MemPieces{MemDiagonals: diags, Limbs: len(p.HintLogQ), Piece: 256}},
		} {
			for _, workers := range []int{1, 2} {
				t.Run(fmt.Sprintf("%dx%d/%s/%d", shape.Rows, shape.Cols, src.name, workers), func(t *testing.T) {
					srv.Workers = workers
					got, err := srv.EvaluateHintBatch(context.Background(), keys, secrets, src.diags, nil)
					if err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if len(got[i]) != len(want[i]) {
							t.Fatalf("query %d: %d outputs, want %d", i, len(got[i]), len(want[i]))
						}
						for o := range want[i] {
							if !got[i][o].Value[0].Equal(&want[i][o].Value[0]) || !got[i][o].Value[1].Equal(&want[i][o].Value[1]) {
								t.Fatalf("query %d, output %d differs from the old path", i, o)
							}
						}
						col, err := clients[i].Decode(states[i], &Answer{Column: scanned[i], Hint: got[i]})
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(col, cols[columns[i]]) {
							t.Fatalf("query %d decodes to a wrong column", i)
						}
					}
				})
			}
		}
	}
}

// A batch whose secrets are at different levels, or whose key sets do not
// match its secrets, is refused before any work.
func TestBatchRefusesMismatch(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 512, Cols: p.N(), RecordSize: 64}
	tiles, _ := testDB(t, p, shape)
	pp := newPIR(t, p, shape, tiles)
	q, _, err := pp.cl.Query(0)
	if err != nil {
		t.Fatal(err)
	}
	low := q.Secret.CopyNew()
	low.Resize(1, 0)
	for name, c := range map[string]struct {
		keys []*EvalKeys
		xs   []*rlwe.Ciphertext
	}{
		"empty":        {nil, nil},
		"keys short":   {[]*EvalKeys{pp.evk}, []*rlwe.Ciphertext{q.Secret, q.Secret}},
		"levels":       {[]*EvalKeys{pp.evk, pp.evk}, []*rlwe.Ciphertext{q.Secret, low}},
		"missing keys": {[]*EvalKeys{pp.evk, nil}, []*rlwe.Ciphertext{q.Secret, q.Secret}},
	} {
		if _, err := pp.srv.EvaluateHintBatch(context.Background(), c.keys, c.xs, pp.diags, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
