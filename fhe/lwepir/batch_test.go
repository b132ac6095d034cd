package lwepir

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
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

// decryptHint returns the slots of a client's hint ciphertexts.
func decryptHint(t *testing.T, cl *Client, hint []*rlwe.Ciphertext) [][]uint64 {
	t.Helper()
	out := make([][]uint64, len(hint))
	for o, ct := range hint {
		out[o] = make([]uint64, cl.bp.MaxSlots())
		if err := cl.ecd.Decode(cl.dec.DecryptNew(ct), out[o]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A client whose keys include the hoisting rotations gets its baby steps
// hoisted: its hint ciphertexts differ from the old path's and decrypt to
// its values slot for slot, and its answers decode; in the same batch, a
// client without them gets the old path's ciphertexts bit for bit. (The
// engine's hoisted rotations are Lattigo's bit for bit: package engine's
// TestRotatorHoistedMatchesLattigo.)
func TestHoistedBabyStepsDecryptEqual(t *testing.T) {
	p := Test()
	n := p.N()
	shape := Shape{Rows: 512, Cols: 2 * n, RecordSize: 64}
	l := shape.Layout(p)
	if l.B1 < 3 {
		t.Fatalf("layout %+v has no baby steps to hoist", l)
	}
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
	var (
		clients []*Client
		keys    []*EvalKeys
		xs      []*rlwe.Ciphertext
		columns = []int{5, shape.Cols - 2}
	)
	for i := range columns {
		sk, evk, err := GenerateKeys(p, shape)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if evk, err = sk.EvalKeys(p, append(l.Rotations(), l.HoistRotations()...)); err != nil {
				t.Fatal(err)
			}
		}
		cl, err := NewClient(p, shape, seed, sk)
		if err != nil {
			t.Fatal(err)
		}
		q, _, err := cl.Query(columns[i])
		if err != nil {
			t.Fatal(err)
		}
		clients, keys, xs = append(clients, cl), append(keys, evk), append(xs, q.Secret)
	}
	if !l.canHoist(keys[0]) || l.canHoist(keys[1]) {
		t.Fatal("the first client's keys should hoist, the second's not")
	}
	got, err := srv.EvaluateHintBatch(context.Background(), keys, xs, diags, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range xs {
		want, err := srv.evaluateHintOld(context.Background(), keys[i], xs[i], diags, nil)
		if err != nil {
			t.Fatal(err)
		}
		same := got[i][0].Value[0].Equal(&want[0].Value[0]) && got[i][0].Value[1].Equal(&want[0].Value[1])
		if i == 1 && !same {
			t.Fatal("chained: differs from the old path")
		}
		if i == 0 && same {
			t.Fatal("hoisted: the chain's ciphertext (was it hoisted?)")
		}
		a, b := decryptHint(t, clients[i], got[i]), decryptHint(t, clients[i], want)
		for o := range a {
			if !slices.Equal(a[o], b[o]) {
				t.Fatalf("client %d, output %d decrypts otherwise than the old path's", i, o)
			}
		}
	}
	for i := range xs {
		q, st, err := clients[i].Query(columns[i])
		if err != nil {
			t.Fatal(err)
		}
		ans, err := srv.Answer(context.Background(), keys[i], q, tiles, diags)
		if err != nil {
			t.Fatal(err)
		}
		col, err := clients[i].Decode(st, ans)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(col, cols[columns[i]]) {
			t.Fatalf("client %d decodes a wrong column", i)
		}
	}
}

// A client's hoisting keys are checked as its others are: one of another
// rotation is refused.
func TestHoistingKeysChecked(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 512, Cols: p.N(), RecordSize: 64}
	l := shape.Layout(p)
	srv, err := NewServer(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	sk, _, err := GenerateKeys(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	evk, err := sk.EvalKeys(p, append(l.Rotations(), l.HoistRotations()...))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.CheckKeys(evk); err != nil {
		t.Fatal(err)
	}
	evk.Rotations[2] = evk.Rotations[3]
	if err := srv.CheckKeys(evk); err == nil {
		t.Fatal("a key of the rotation by 3 passed for 2")
	}
}

// countingGate grants at most cores holders at once and records the most
// it saw and how many grants it gave.
type countingGate struct {
	mu               sync.Mutex
	cores            chan struct{}
	held, most, gave int
}

func (g *countingGate) Acquire(ctx context.Context) (func(), error) {
	select {
	case g.cores <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.mu.Lock()
	g.held++
	g.gave++
	g.most = max(g.most, g.held)
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.held--
		g.mu.Unlock()
		<-g.cores
	}, nil
}

// A batch on four workers under a gate of two cores: every step holds a
// core (never more than two at once, and some at the same time), the
// results are the ungated ones bit for bit, and a cancelled context stops
// it.
func TestBatchHoldsGate(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 512, Cols: p.N(), RecordSize: 64}
	tiles, _ := testDB(t, p, shape)
	pp := newPIR(t, p, shape, tiles)
	var keys []*EvalKeys
	var xs []*rlwe.Ciphertext
	for range 3 {
		q, _, err := pp.cl.Query(1)
		if err != nil {
			t.Fatal(err)
		}
		keys, xs = append(keys, pp.evk), append(xs, q.Secret)
	}
	pp.srv.Workers = 4
	want, err := pp.srv.EvaluateHintBatch(context.Background(), keys, xs, pp.diags, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &countingGate{cores: make(chan struct{}, 2)}
	got, err := pp.srv.EvaluateHintBatch(context.Background(), keys, xs, pp.diags, g)
	if err != nil {
		t.Fatal(err)
	}
	l := shape.Layout(p)
	// At least: each query's baby steps and giant steps, and its sums.
	if least := len(xs) * (l.B1 - 1 + l.B2 - 1 + 1); g.gave < least || g.most != 2 {
		t.Fatalf("%d grants (want ≥ %d), at most %d held (want 2)", g.gave, least, g.most)
	}
	for i := range want {
		for o := range want[i] {
			if !got[i][o].Value[0].Equal(&want[i][o].Value[0]) || !got[i][o].Value[1].Equal(&want[i][o].Value[1]) {
				t.Fatalf("query %d output %d differs under the gate", i, o)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pp.srv.EvaluateHintBatch(ctx, keys, xs, pp.diags, g); err == nil {
		t.Fatal("a cancelled batch ran")
	}
}
