package lwepir

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// testDB builds a random database of the given shape as tiles, plus its
// records laid out in columns.
func testDB(t *testing.T, p Params, shape Shape) (MemTiles, [][]byte) {
	t.Helper()
	n := p.N()
	tiles := make(MemTiles, shape.Tiles(p))
	for k := range tiles {
		tiles[k] = make([]byte, shape.TileBytes(p))
		if _, err := rand.Read(tiles[k]); err != nil {
			t.Fatal(err)
		}
	}
	// column c, row i is tiles[c/n][i*n + c%n]
	cols := make([][]byte, shape.Cols)
	for c := range cols {
		cols[c] = make([]byte, shape.Rows)
		for i := range cols[c] {
			cols[c][i] = tiles[c/n][i*n+c%n]
		}
	}
	return tiles, cols
}

func buildHint(t *testing.T, p Params, shape Shape, seed [SeedSize]byte, tiles Tiles) MemDiagonals {
	t.Helper()
	h, err := ComputeHint(context.Background(), p, shape, seed, tiles)
	if err != nil {
		t.Fatal(err)
	}
	diags := make(MemDiagonals, DiagonalCount(p, shape))
	if err := EncodeDiagonals(p, shape, h, func(i int, w []uint64) error {
		diags[i] = append([]uint64(nil), w...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return diags
}

// pirParts are what queries of one database need: its hint, a client's
// keys, the client and a server.
type pirParts struct {
	seed  [SeedSize]byte
	diags MemDiagonals
	evk   *EvalKeys
	cl    *Client
	srv   *Server
}

// newPIR builds the parts for tiles under a fresh random seed and keys.
func newPIR(t *testing.T, p Params, shape Shape, tiles Tiles) pirParts {
	t.Helper()
	var seed [SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		t.Fatal(err)
	}
	diags := buildHint(t, p, shape, seed, tiles)
	sk, evk, err := GenerateKeys(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(p, shape, seed, sk)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	return pirParts{seed: seed, diags: diags, evk: evk, cl: cl, srv: srv}
}

// TestHintEqualsNaiveProduct checks H' = (D − 128)·A against the product
// computed entry by entry from the negacyclic blocks.
func TestHintEqualsNaiveProduct(t *testing.T) {
	p := Test()
	n := p.N()
	shape := Shape{Rows: 8, Cols: 2 * n, RecordSize: 8}
	var seed [SeedSize]byte
	seed[0] = 7
	tiles, cols := testDB(t, p, shape)
	h, err := ComputeHint(context.Background(), p, shape, seed, tiles)
	if err != nil {
		t.Fatal(err)
	}
	// A[j][c] for column j = k·n + t: (A_k)_{t,c} = coefficient t of a_k·X^c.
	a := make([]int64, n)
	for i := 0; i < shape.Rows; i++ {
		for c := 0; c < n; c++ {
			var want uint32
			for k := 0; k < shape.Tiles(p); k++ {
				publicBlock(seed, k, a)
				for tt := 0; tt < n; tt++ {
					// coefficient tt of a·X^c = a[tt-c] if tt ≥ c else −a[tt-c+n]
					var e int64
					if tt >= c {
						e = a[tt-c]
					} else {
						e = -a[tt-c+n]
					}
					d := int64(cols[k*n+tt][i]) - centre
					want += uint32(d * e)
				}
			}
			if got := h[i*n+c]; got != want {
				t.Fatalf("H'[%d][%d] = %d, want %d", i, c, got, want)
			}
		}
	}
}

// TestQueryDecodesEveryColumn runs whole queries and compares the decoded
// column with the database, byte for byte.
func TestQueryDecodesEveryColumn(t *testing.T) {
	p := Test()
	n := p.N()
	for _, shape := range []Shape{
		{Rows: 512, Cols: 2 * n, RecordSize: 64},           // half a hint ciphertext
		{Rows: 2 * p.HintSlots(), Cols: n, RecordSize: 16}, // two hint ciphertexts
	} {
		tiles, cols := testDB(t, p, shape)
		pp := newPIR(t, p, shape, tiles)
		diags, evk, cl, srv := pp.diags, pp.evk, pp.cl, pp.srv
		for _, col := range []int{0, 1, n - 1, shape.Cols - 1, shape.Cols / 3} {
			q, st, err := cl.Query(col)
			if err != nil {
				t.Fatal(err)
			}
			ans, err := srv.Answer(context.Background(), evk, q, tiles, diags)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cl.Decode(st, ans)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, cols[col]) {
				bad := 0
				for i := range got {
					if got[i] != cols[col][i] {
						bad++
					}
				}
				t.Fatalf("shape %+v column %d: %d of %d bytes wrong", shape, col, bad, len(got))
			}
		}
	}
}

// TestWireRoundTrip sends a query and its answer through their wire form
// (the device's QueryLWE) and decodes the column.
func TestWireRoundTrip(t *testing.T) {
	p := Test()
	shape := Shape{Rows: 300, Cols: p.N(), RecordSize: 100}
	var seed [SeedSize]byte
	tiles, cols := testDB(t, p, shape)
	diags := buildHint(t, p, shape, seed, tiles)
	sk, evk, err := GenerateKeys(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	cl, _ := NewClient(p, shape, seed, sk)
	srv, _ := NewServer(p, shape)
	q, st, err := cl.Query(5)
	if err != nil {
		t.Fatal(err)
	}
	vec, err := UnmarshalWords(MarshalWords(q.Vector), len(q.Vector))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := UnmarshalSecret(p, MarshalCiphertext(q.Secret))
	if err != nil {
		t.Fatal(err)
	}
	ans, err := srv.Answer(context.Background(), evk, &Query{Vector: vec, Secret: secret}, tiles, diags)
	if err != nil {
		t.Fatal(err)
	}
	col, err := UnmarshalWords(MarshalWords(ans.Column), shape.Rows)
	if err != nil {
		t.Fatal(err)
	}
	hint, err := UnmarshalHint(p, MarshalCiphertext(ans.Hint[0]))
	if err != nil {
		t.Fatal(err)
	}
	// A byte short, a byte more, or a coefficient at its modulus is refused.
	raw := MarshalCiphertext(q.Secret)
	if _, err := UnmarshalSecret(p, raw[1:]); !errors.Is(err, ErrParams) {
		t.Fatalf("a secret a byte short: %v", err)
	}
	if _, err := UnmarshalHint(p, append(MarshalCiphertext(ans.Hint[0]), 0)); !errors.Is(err, ErrParams) {
		t.Fatalf("a hint a byte long: %v", err)
	}
	bp, _ := p.hintParams()
	binary.LittleEndian.PutUint64(raw[8:], bp.Q()[0])
	if _, err := UnmarshalSecret(p, raw); !errors.Is(err, ErrParams) {
		t.Fatalf("a coefficient at its modulus: %v", err)
	}
	if _, err := UnmarshalWords(MarshalWords(ans.Column), shape.Rows+1); !errors.Is(err, ErrParams) {
		t.Fatalf("a column of the wrong length: %v", err)
	}
	got, err := cl.Decode(st, &Answer{Column: col, Hint: []*rlwe.Ciphertext{hint}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, cols[5]) {
		t.Fatal("column 5 differs after the wire round trip")
	}
	rec, err := cl.Record(got, 2)
	if err != nil || !bytes.Equal(rec, cols[5][200:300]) {
		t.Fatalf("record: %v", err)
	}
}

// TestQueryIsLWESample checks every entry of a query against its
// definition, q_j = (a_k ⋆ s)_t + e_j + Δ·[j = col] modulo 2^32 for
// j = k·N + t, with the negacyclic products computed coefficient by
// coefficient: |e_j| ≤ η, the errors not all zero, the state's Σ q_j
// right; for two queries (the second on the cached blocks) over a shape
// whose tiles split unevenly over the workers.
func TestQueryIsLWESample(t *testing.T) {
	p := Test()
	n := p.N()
	shape := Shape{Rows: 16, Cols: 5 * n, RecordSize: 4}
	var seed [SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		t.Fatal(err)
	}
	sk, _, err := GenerateKeys(p, shape)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(p, shape, seed, sk)
	if err != nil {
		t.Fatal(err)
	}
	a := make([]int64, n)
	for _, col := range []int{3*n + 7, 0} {
		q, st, err := cl.Query(col)
		if err != nil {
			t.Fatal(err)
		}
		var sum uint32
		nonzero := 0
		for k := 0; k < shape.Tiles(p); k++ {
			publicBlock(seed, k, a)
			for tt := 0; tt < n; tt++ {
				var as int64 // (a ⋆ s)_t over the integers
				for i := 0; i < n; i++ {
					if j := tt - i; j >= 0 {
						as += a[i] * st.s[j]
					} else {
						as -= a[i] * st.s[j+n]
					}
				}
				jj := k*n + tt
				e := int32(q.Vector[jj] - uint32(as))
				if jj == col {
					e = int32(q.Vector[jj] - uint32(as) - 1<<logDelta)
				}
				if e < -int32(p.Eta) || e > int32(p.Eta) {
					t.Fatalf("column %d: entry %d has error %d, outside ±%d", col, jj, e, p.Eta)
				}
				if e != 0 {
					nonzero++
				}
				sum += q.Vector[jj]
			}
		}
		if nonzero < shape.Cols/2 || sum != st.sumQ {
			t.Fatalf("column %d: %d nonzero errors of %d; Σq %d, state %d", col, nonzero, shape.Cols, sum, st.sumQ)
		}
	}
}
