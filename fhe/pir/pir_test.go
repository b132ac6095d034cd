package pir

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/internal/fhetest"
)

// env is a parameter set with one key set for every test of it: the
// secret key, the relinearization key and the Galois keys of every depth a
// shape of these parameters can use.
type env struct {
	params bgv.Parameters
	sk     *rlwe.SecretKey
	evk    *rlwe.MemEvaluationKeySet
}

var (
	envMu sync.Mutex
	envs  = map[string]*env{}
)

func getEnv(t testing.TB, preset string) *env {
	t.Helper()
	envMu.Lock()
	defer envMu.Unlock()
	if e, ok := envs[preset]; ok {
		return e
	}
	_, params := fhetest.BGVParams(t, preset)
	kgen := rlwe.NewKeyGenerator(params)
	sk := kgen.GenSecretKeyNew()
	// The deepest tree: 1 + log2(N/4) levels.
	galEls := rlwe.GaloisElementsForExpand(params, params.LogN()-1)
	evk := rlwe.NewMemEvaluationKeySet(kgen.GenRelinearizationKeyNew(sk), kgen.GenGaloisKeysNew(galEls, sk)...)
	e := &env{params: params, sk: sk, evk: evk}
	envs[preset] = e
	return e
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := i; j < min(i+8, n); j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
	return b
}

// client is a PIR client for shape s under the environment's secret key.
func (e *env) client(t testing.TB, s Shape) *Client {
	t.Helper()
	c, err := NewClient(e.params, s, e.sk)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// server is a PIR server for shape s under the environment's evaluation
// keys, running on workers goroutines.
func (e *env) server(t testing.TB, s Shape, workers int) *Server {
	t.Helper()
	srv, err := NewServer(e.params, s, e.evk, workers)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func mustShape(t testing.TB, params bgv.Parameters, recordSize, records int) Shape {
	t.Helper()
	s, err := NewShape(params, recordSize, records)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sameCiphertext fails unless a and b have identical metadata-free
// contents: degree, level and every coefficient.
func sameCiphertext(t testing.TB, what string, a, b *rlwe.Ciphertext) {
	t.Helper()
	if a.Degree() != b.Degree() || a.Level() != b.Level() {
		t.Fatalf("%s: degree/level %d/%d vs %d/%d", what, a.Degree(), a.Level(), b.Degree(), b.Level())
	}
	for i := range a.Value {
		for l := range a.Value[i].Coeffs {
			for k, v := range a.Value[i].Coeffs[l] {
				if w := b.Value[i].Coeffs[l][k]; v != w {
					t.Fatalf("%s: polynomial %d limb %d coefficient %d: %d vs %d", what, i, l, k, v, w)
				}
			}
		}
	}
}

// TestShapeLocate checks the layout by brute force on small cases: the
// shape formulas, every index at a distinct (plaintext, offset) that maps
// back to it, rows/columns in range, and out-of-range indices refused.
func TestShapeLocate(t *testing.T) {
	params := getEnv(t, "insecure-test-bgv").params
	n := params.N()
	for _, rs := range []int{1, 2, 3, 7, 64, 300, 1000, 2047, 2 * n} {
		per := 2 * n / rs
		for _, records := range []int{1, 2, per - 1, per, per + 1, 3*per + 5, 37 * per, 300*per - 1, 513 * per} {
			if records < 1 || records > 600_000 {
				continue
			}
			s, err := NewShape(params, rs, records)
			if err != nil {
				t.Fatalf("rs %d records %d: %v", rs, records, err)
			}
			// Independent recomputation of the layout.
			m := (records + per - 1) / per
			cols := 1
			for cols < m && cols < 256 {
				cols *= 2
			}
			rows := 1
			for rows*cols < m {
				rows *= 2
			}
			want := Shape{N: n, RecordSize: rs, Records: records, PerPlaintext: per, Plaintexts: m, Rows: rows, Cols: cols}
			if s != want {
				t.Fatalf("rs %d records %d: shape %+v, want %+v", rs, records, s, want)
			}
			seen := make(map[[2]int]bool, records)
			for i := 0; i < records; i++ {
				p, r, c, off, err := s.Locate(i)
				if err != nil {
					t.Fatalf("Locate(%d): %v", i, err)
				}
				if p < 0 || p >= s.Plaintexts || r < 0 || r >= s.Rows || c < 0 || c >= s.Cols || r*s.Cols+c != p {
					t.Fatalf("rs %d: index %d at plaintext %d row %d col %d (shape %+v)", rs, i, p, r, c, s)
				}
				if off < 0 || off%rs != 0 || off+rs > 2*n {
					t.Fatalf("rs %d: index %d at offset %d", rs, i, off)
				}
				if back := p*per + off/rs; back != i {
					t.Fatalf("rs %d: index %d maps back to %d", rs, i, back)
				}
				key := [2]int{p, off}
				if seen[key] {
					t.Fatalf("rs %d: index %d shares (plaintext %d, offset %d)", rs, i, p, off)
				}
				seen[key] = true
			}
			for _, bad := range []int{-1, records, records + 1} {
				if _, _, _, _, err := s.Locate(bad); !errors.Is(err, ErrIndexOutOfRange) {
					t.Fatalf("Locate(%d) of %d records: %v, want ErrIndexOutOfRange", bad, records, err)
				}
			}
		}
	}
	// Invalid shapes.
	for _, c := range []struct{ rs, records int }{{0, 1}, {2*n + 1, 1}, {-3, 1}, {64, 0}, {64, -1}} {
		if _, err := NewShape(params, c.rs, c.records); !errors.Is(err, ErrShape) {
			t.Errorf("NewShape(%d, %d): %v, want ErrShape", c.rs, c.records, err)
		}
	}
	// The largest database: Rows = N/4, Cols = 256.
	maxPts := (n / 4) * 256
	if s := mustShape(t, params, 2*n, maxPts); s.Rows != n/4 || s.Cols != 256 {
		t.Errorf("largest shape %+v", s)
	}
	if _, err := NewShape(params, 2*n, maxPts+1); !errors.Is(err, ErrShape) {
		t.Errorf("%d plaintexts: %v, want ErrShape", maxPts+1, err)
	}
	big13 := getEnv(t, "bgv-13").params
	if s := mustShape(t, big13, 2*big13.N(), 2048*256); s.Rows != 2048 || s.Cols != 256 || s.Depth() != 12 {
		t.Errorf("bgv-13 largest shape %+v", s)
	}
	if _, err := NewShape(big13, 2*big13.N(), 2048*256+1); !errors.Is(err, ErrShape) {
		t.Errorf("bgv-13 beyond the largest shape: %v", err)
	}
	// Galois elements: those of Lattigo's expansion, all ≡ 1 mod 4.
	s := mustShape(t, params, 2*n, 1000) // 1000 plaintexts: 4 × 256
	if s.Rows != 4 || s.Cols != 256 || s.Depth() != 9 {
		t.Fatalf("shape %+v", s)
	}
	gal := s.GaloisElements()
	ref := rlwe.GaloisElementsForExpand(params, params.LogN())
	if len(gal) != 9 {
		t.Fatalf("%d Galois elements, want 9", len(gal))
	}
	for j, g := range gal {
		if g != ref[j] || g != uint64(n>>j)+1 || g%4 != 1 {
			t.Errorf("g_%d = %d, Lattigo %d", j, g, ref[j])
		}
	}
	// Query coefficients: distinct, rows even < 2R, columns odd < 2C.
	s = mustShape(t, params, 2*n, 1500) // 8 × 256
	rowsSeen, colsSeen := map[int]bool{}, map[int]bool{}
	for r := 0; r < s.Rows; r++ {
		for c := 0; c < s.Cols; c++ {
			rc, cc := s.QueryCoefficients(r, c)
			if rc%2 != 0 || rc >= 2*s.Rows || cc%2 != 1 || cc >= 2*s.Cols {
				t.Fatalf("(%d, %d) → coefficients %d, %d", r, c, rc, cc)
			}
			if c == 0 {
				if rowsSeen[rc] {
					t.Fatalf("row coefficient %d repeated", rc)
				}
				rowsSeen[rc] = true
			}
			if r == 0 {
				if colsSeen[cc] {
					t.Fatalf("column coefficient %d repeated", cc)
				}
				colsSeen[cc] = true
			}
		}
	}
	if rc, cc := s.QueryCoefficients(1, 1); rc != 2*4 || cc != 1+2*128 {
		t.Errorf("QueryCoefficients(1, 1) = %d, %d, want 8, 257", rc, cc)
	}
}

// TestEncodePlaintext checks the 16-bit little-endian chunking and its
// refusals.
func TestEncodePlaintext(t *testing.T) {
	params := getEnv(t, "insecure-test-bgv").params
	s := mustShape(t, params, 3, 100)
	recs := []byte{0x01, 0x02, 0x03, 0x04, 0x05, 0xff}
	m, err := EncodePlaintext(s, recs)
	if err != nil {
		t.Fatal(err)
	}
	m16, err := EncodePlaintext16(s, recs)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x0201, 0x0403, 0xff05}
	if len(m) != params.N() || len(m16) != params.N() {
		t.Fatalf("lengths %d, %d", len(m), len(m16))
	}
	for k := range m {
		w := uint64(0)
		if k < len(want) {
			w = want[k]
		}
		if m[k] != w || uint64(m16[k]) != w {
			t.Fatalf("coefficient %d: %#x / %#x, want %#x", k, m[k], m16[k], w)
		}
	}
	recs = append(recs, 7) // not whole records
	if _, err := EncodePlaintext(s, recs); !errors.Is(err, ErrRecords) {
		t.Errorf("partial record: %v", err)
	}
	if _, err := EncodePlaintext(s, make([]byte, 3*(s.PerPlaintext+1))); !errors.Is(err, ErrRecords) {
		t.Errorf("too many records: %v", err)
	}
	// The memory database encodes plaintext p as EncodePlaintext of its
	// records and zero-fills beyond them.
	data := randomBytes(9, 3*100)
	db, err := NewMemoryDatabase(s, data)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]uint64, params.N())
	if err := db.Plaintext(context.Background(), 0, got); err != nil {
		t.Fatal(err)
	}
	ref, _ := EncodePlaintext(s, data)
	for k := range got {
		if got[k] != ref[k] {
			t.Fatalf("database coefficient %d: %d, want %d", k, got[k], ref[k])
		}
	}
}

// e2eCase is a database for the end-to-end tests.
type e2eCase struct {
	name        string
	recordSize  int
	records     int
	rows, cols  int // expected shape
	workersOnly bool
}

// runCase answers queries for five or more indices (first, last, and
// random ones) with 1 and 2 workers, checks the two answers are
// bit-identical, and that the decoded record is the stored one.
func runCase(t *testing.T, e *env, c e2eCase, seed uint64) {
	params := e.params
	s := mustShape(t, params, c.recordSize, c.records)
	if s.Rows != c.rows || s.Cols != c.cols {
		t.Fatalf("%s: shape %d × %d, want %d × %d", c.name, s.Rows, s.Cols, c.rows, c.cols)
	}
	data := randomBytes(seed, c.records*c.recordSize)
	db, err := NewMemoryDatabase(s, data)
	if err != nil {
		t.Fatal(err)
	}
	client := e.client(t, s)
	srv1 := e.server(t, s, 1)
	srv2 := e.server(t, s, 2)
	r := rand.New(rand.NewPCG(seed, 1))
	indices := []int{0, c.records - 1}
	for len(indices) < 5 {
		indices = append(indices, r.IntN(c.records))
	}
	ctx := context.Background()
	wantScale := AnswerScale(params)
	for _, i := range indices {
		q, err := client.Query(i)
		if err != nil {
			t.Fatal(err)
		}
		a1, err := srv1.Answer(ctx, q, db)
		if err != nil {
			t.Fatalf("%s index %d: %v", c.name, i, err)
		}
		a2, err := srv2.Answer(ctx, q, db)
		if err != nil {
			t.Fatalf("%s index %d: %v", c.name, i, err)
		}
		sameCiphertext(t, c.name+": 1 vs 2 workers", a1, a2)
		if a1.Level() != params.MaxLevel()-2 || !a1.Scale.Equal(wantScale) {
			t.Fatalf("%s: answer at level %d scale %v, want %d and %v", c.name, a1.Level(), a1.Scale.Uint64(), params.MaxLevel()-2, wantScale.Uint64())
		}
		got, err := client.Decode(i, a1)
		if err != nil {
			t.Fatalf("%s index %d: %v", c.name, i, err)
		}
		want, _ := db.Record(i)
		if string(got) != string(want) {
			t.Fatalf("%s index %d: decoded %x…, want %x…", c.name, i, got[:min(16, len(got))], want[:min(16, len(want))])
		}
	}
}

// TestEndToEnd retrieves records with bgv-13 over shapes with one row,
// one column, and several of both, records of 64, 300 and 2N bytes.
func TestEndToEnd(t *testing.T) {
	e := getEnv(t, "bgv-13")
	n := e.params.N()
	cases := []e2eCase{
		{name: "rs64-M64", recordSize: 64, records: 64 * 256, rows: 1, cols: 64},
		{name: "rs64-M1024", recordSize: 64, records: 1024*256 - 100, rows: 4, cols: 256},
		{name: "rs300-M300", recordSize: 300, records: 300*54 - 17, rows: 2, cols: 256},
		{name: "rs2N-M5", recordSize: 2 * n, records: 5, rows: 1, cols: 8},
		{name: "rs2N-M1", recordSize: 2 * n, records: 1, rows: 1, cols: 1},
	}
	if testing.Short() {
		cases = append(cases[:1], cases[2:]...)
	}
	for k, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, e, c, uint64(100+k)) })
	}
}

// TestEndToEndLevels runs the protocol on insecure-test-bgv (six levels:
// expansion at 5, scan at 4, answer at 3) with Rows > 1.
func TestEndToEndLevels(t *testing.T) {
	e := getEnv(t, "insecure-test-bgv")
	runCase(t, e, e2eCase{name: "insecure-rs100", recordSize: 100, records: 600 * 40, rows: 4, cols: 256}, 7)
}

// decodeSelection decrypts a selection and returns its N coefficients.
func decodeSelection(t *testing.T, e *env, ct *rlwe.Ciphertext) []uint64 {
	t.Helper()
	pt := rlwe.NewDecryptor(e.params, e.sk).DecryptNew(ct)
	pt.IsBatched = false
	m := make([]uint64, e.params.N())
	if err := bgv.NewEncoder(e.params).Decode(pt, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestExpansion expands queries and decrypts every selection: exactly the
// constant 1 at the selected row and column, the zero polynomial
// elsewhere. The expansion is deterministic (two servers agree bit for
// bit).
func TestExpansion(t *testing.T) {
	for _, c := range []struct {
		preset  string
		records int // of 2N bytes: one per plaintext
		rows    int
		cols    int
	}{
		{"bgv-13", 600, 4, 256},
		{"bgv-13", 3, 1, 4},
		{"insecure-test-bgv", 2000, 8, 256},
	} {
		e := getEnv(t, c.preset)
		params := e.params
		s := mustShape(t, params, 2*params.N(), c.records)
		if s.Rows != c.rows || s.Cols != c.cols {
			t.Fatalf("shape %+v", s)
		}
		client := e.client(t, s)
		srv := e.server(t, s, 2)
		srv1 := e.server(t, s, 1)
		for _, idx := range []int{0, c.records - 1, c.records / 2} {
			_, row, col, _, _ := s.Locate(idx)
			q, err := client.Query(idx)
			if err != nil {
				t.Fatal(err)
			}
			cols, rows, err := srv.Expand(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			cols1, rows1, err := srv1.Expand(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(cols) != s.Cols || len(rows) != s.Rows {
				t.Fatalf("%d column and %d row selections", len(cols), len(rows))
			}
			check := func(kind string, sels, sels1 []*rlwe.Ciphertext, pick int) {
				for i, ct := range sels {
					sameCiphertext(t, kind, ct, sels1[i])
					if ct.Level() != params.MaxLevel()-1 {
						t.Fatalf("%s selection %d at level %d", kind, i, ct.Level())
					}
					m := decodeSelection(t, e, ct)
					want := uint64(0)
					if i == pick {
						want = 1
					}
					if m[0] != want {
						t.Fatalf("%s %s index %d: %s selection %d has constant %d, want %d", c.preset, fmt.Sprintf("%d×%d", s.Rows, s.Cols), idx, kind, i, m[0], want)
					}
					for k, v := range m[1:] {
						if v != 0 {
							t.Fatalf("%s index %d: %s selection %d coefficient %d = %d", c.preset, idx, kind, i, k+1, v)
						}
					}
				}
			}
			check("column", cols, cols1, col)
			check("row", rows, rows1, row)
		}
	}
}

// TestBadInput: refusals instead of panics.
func TestBadInput(t *testing.T) {
	e := getEnv(t, "insecure-test-bgv")
	params := e.params
	s := mustShape(t, params, 64, 5000)
	data := randomBytes(3, 64*5000)
	db, _ := NewMemoryDatabase(s, data)
	client := e.client(t, s)
	srv := e.server(t, s, 2)
	ctx := context.Background()
	if _, err := client.Query(5000); !errors.Is(err, ErrIndexOutOfRange) {
		t.Errorf("query out of range: %v", err)
	}
	if _, err := client.Query(-1); !errors.Is(err, ErrIndexOutOfRange) {
		t.Errorf("query -1: %v", err)
	}
	q, err := client.Query(17)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Answer(ctx, nil, db); !errors.Is(err, ErrCiphertext) {
		t.Errorf("nil query: %v", err)
	}
	low := q.CopyNew()
	low.Resize(1, q.Level()-1)
	if _, err := srv.Answer(ctx, low, db); !errors.Is(err, ErrCiphertext) {
		t.Errorf("low query: %v", err)
	}
	deg2 := bgv.NewCiphertext(params, 2, params.MaxLevel())
	if _, err := srv.Answer(ctx, deg2, db); !errors.Is(err, ErrCiphertext) {
		t.Errorf("degree-2 query: %v", err)
	}
	if _, err := srv.Answer(ctx, q, nil); !errors.Is(err, ErrDatabase) {
		t.Errorf("nil database: %v", err)
	}
	//lint:ignore SA1012 a nil context must be refused, not panic
	if _, err := srv.Answer(nil, q, db); err == nil { //nolint:staticcheck
		t.Errorf("nil context accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := srv.Answer(cctx, q, db); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if _, err := srv.Answer(ctx, q, failingDB{}); !errors.Is(err, ErrDatabase) || !errors.Is(err, errBroken) {
		t.Errorf("failing database: %v", err)
	}
	if _, err := srv.Answer(ctx, q, bigDB{}); !errors.Is(err, ErrDatabase) {
		t.Errorf("coefficients ≥ t: %v", err)
	}
	a, err := srv.Answer(ctx, q, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Decode(17, nil); !errors.Is(err, ErrCiphertext) {
		t.Errorf("nil answer: %v", err)
	}
	if _, err := client.Decode(17, q); !errors.Is(err, ErrCiphertext) {
		t.Errorf("answer at the wrong level: %v", err)
	}
	if _, err := client.Decode(5000, a); !errors.Is(err, ErrIndexOutOfRange) {
		t.Errorf("decode out of range: %v", err)
	}
	// Keys and shapes.
	if _, err := NewClient(params, s, nil); !errors.Is(err, ErrKeys) {
		t.Errorf("nil secret key: %v", err)
	}
	if _, err := NewServer(params, s, nil, 1); !errors.Is(err, ErrKeys) {
		t.Errorf("nil key set: %v", err)
	}
	noGal := rlwe.NewMemEvaluationKeySet(e.evk.RelinearizationKey)
	if _, err := NewServer(params, s, noGal, 1); !errors.Is(err, ErrKeys) {
		t.Errorf("no Galois keys: %v", err)
	}
	if _, err := NewServer(params, s, e.evk, 0); err == nil {
		t.Errorf("0 workers accepted")
	}
	bad := s
	bad.Rows *= 2
	if _, err := NewServer(params, bad, e.evk, 1); !errors.Is(err, ErrShape) {
		t.Errorf("inconsistent shape: %v", err)
	}
	if _, err := NewClient(params, Shape{}, e.sk); !errors.Is(err, ErrShape) {
		t.Errorf("zero shape: %v", err)
	}
	if _, _, _, _, err := (Shape{}).Locate(0); !errors.Is(err, ErrIndexOutOfRange) {
		t.Errorf("zero shape Locate: %v", err)
	}
	if m := Monomials(params, params.MaxLevel()+1, 3); m != nil {
		t.Errorf("monomials above the top level")
	}
	// The right answer still decodes after all that.
	got, err := client.Decode(17, a)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data[17*64:18*64]) {
		t.Errorf("record 17 decoded wrong")
	}
}

var errBroken = errors.New("broken disk")

type failingDB struct{}

func (failingDB) Plaintext(context.Context, int, []uint64) error { return errBroken }

type bigDB struct{}

func (bigDB) Plaintext(_ context.Context, _ int, dst []uint64) error {
	for i := range dst {
		dst[i] = 1 << 20
	}
	return nil
}

// TestMonomials: entry j is NTT(X^{-2^j}); multiplying X^{2^j} by it gives 1.
func TestMonomials(t *testing.T) {
	params := getEnv(t, "insecure-test-bgv").params
	level := params.MaxLevel()
	mono := Monomials(params, level, params.LogN()+3)
	if len(mono) != params.LogN() {
		t.Fatalf("%d monomials, want log N = %d", len(mono), params.LogN())
	}
	r := params.RingQ().AtLevel(level)
	for j, m := range mono {
		x := r.NewPoly()
		for i := range x.Coeffs {
			x.Coeffs[i][1<<j] = 1
		}
		r.NTT(x, x)
		r.MulCoeffsBarrett(x, m, x)
		r.INTT(x, x)
		for i := range x.Coeffs {
			for k, v := range x.Coeffs[i] {
				want := uint64(0)
				if k == 0 {
					want = 1
				}
				if v != want {
					t.Fatalf("X^%d · monomial %d: limb %d coefficient %d = %d", 1<<j, j, i, k, v)
				}
			}
		}
	}
}
