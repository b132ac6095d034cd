package client_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
)

func gaussian(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		for k := range out[i] {
			out[i][k] = float32(r.NormFloat64())
		}
	}
	return out
}

func bruteForce(db [][]float32, q []float32) int {
	best, bestD := 0, math.Inf(1)
	for i, x := range db {
		var d float64
		for k := range x {
			t := float64(x[k] - q[k])
			d += t * t
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// A user's vectors from an .fvecs file: the encrypted nearest-neighbour
// search agrees with a plaintext brute-force search on its top-1 for
// every query, and reports the squared distances.
func TestNearestFVecs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	r := rand.New(rand.NewPCG(7, 8))
	const n, dim = 3000, 48
	db := gaussian(r, n, dim)
	path := filepath.Join(e.dir, "base.fvecs")
	var buf bytes.Buffer
	if err := dataset.WriteFVecs(&buf, db); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, buf.Bytes(), 0o644)
	if _, err := e.c.CreateVectors(ctx, "vecs", dim, client.VectorOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.c.Load(ctx, "vecs", f, client.LoadOptions{Vectors: dataset.FVecs})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if in.Records != n || in.Vectors.Dim != dim {
		t.Fatalf("loaded %+v", in)
	}
	agree := 0
	const queries = 20
	for i := 0; i < queries; i++ {
		q := gaussian(r, 1, dim)[0]
		got, err := e.c.Nearest(ctx, "vecs", q, 3)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForce(db, q)
		if got.IDs[0] == want {
			agree++
		}
		var d float64
		for k := range q {
			t := float64(db[got.IDs[0]][k] - q[k])
			d += t * t
		}
		if math.Abs(got.Scores[0]-d) > 1e-2*d {
			t.Fatalf("query %d: reported distance² %g, the vector's is %g", i, got.Scores[0], d)
		}
	}
	if agree < queries {
		t.Fatalf("top-1 agrees with brute force on %d of %d queries", agree, queries)
	}
}

// Bad vector input: a truncated file, a dimension mismatch, a stream that
// cannot be read twice — each named; the database keeps its generation.
func TestVectorBadInput(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	r := rand.New(rand.NewPCG(9, 9))
	if _, err := e.c.CreateVectors(ctx, "v", 16, client.VectorOptions{}); err != nil {
		t.Fatal(err)
	}
	var good bytes.Buffer
	dataset.WriteFVecs(&good, gaussian(r, 100, 16))
	if _, err := e.c.Load(ctx, "v", bytes.NewReader(good.Bytes()), client.LoadOptions{Vectors: dataset.FVecs}); err != nil {
		t.Fatal(err)
	}
	trunc := good.Bytes()[:good.Len()-10]
	_, err := e.c.Load(ctx, "v", bytes.NewReader(trunc), client.LoadOptions{Vectors: dataset.FVecs})
	if !errors.Is(err, dataset.ErrTruncated) || !strings.Contains(err.Error(), "vector 99") {
		t.Fatalf("truncated fvecs: %v, want ErrTruncated naming vector 99", err)
	}
	var other bytes.Buffer
	dataset.WriteFVecs(&other, gaussian(r, 10, 8))
	_, err = e.c.Load(ctx, "v", bytes.NewReader(other.Bytes()), client.LoadOptions{Vectors: dataset.FVecs})
	if !errors.Is(err, dataset.ErrDimensionMismatch) || !strings.Contains(err.Error(), "8 dimensions") {
		t.Fatalf("8-d vectors into a 16-d database: %v", err)
	}
	_, err = e.c.Load(ctx, "v", &readerOf{bytes.NewReader(good.Bytes())}, client.LoadOptions{Vectors: dataset.FVecs})
	if err == nil {
		t.Fatal("a vector load from a stream that cannot seek succeeded")
	}
	if _, err := e.c.Nearest(ctx, "v", make([]float32, 8), 1); !errors.Is(err, dataset.ErrDimensionMismatch) {
		t.Fatalf("query of the wrong dimension: %v", err)
	}
	in, err := e.c.Info(ctx, "v")
	if err != nil || in.Generation != 1 || in.Records != 100 {
		t.Fatalf("after failed loads: %+v, %v", in, err)
	}
	res, err := e.c.Nearest(ctx, "v", make([]float32, 16), 1)
	if err != nil || len(res.IDs) != 1 {
		t.Fatalf("query after failed loads: %+v, %v", res, err)
	}
}

// Vectors stored encrypted (EncryptVectors): Nearest agrees with a
// plaintext brute-force search and reports the squared distances; the
// manifest says so; another key set cannot query them (ErrVectorKey).
func TestNearestEncryptedVectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keys, err := client.NewKeys(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := openStore(filepath.Join(dir, "store"), keys)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	const n, dim = 400, 16
	db := gaussian(r, n, dim)
	var buf bytes.Buffer
	if err := dataset.WriteFVecs(&buf, db); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVectors(ctx, "enc", dim, client.VectorOptions{EncryptVectors: true}); err != nil {
		t.Fatal(err)
	}
	in, err := c.Load(ctx, "enc", bytes.NewReader(buf.Bytes()), client.LoadOptions{Vectors: dataset.FVecs})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Vectors.Encrypted || in.Vectors.Key == "" || in.Records != n {
		t.Fatalf("loaded %+v", in)
	}
	for i := 0; i < 10; i++ {
		q := gaussian(r, 1, dim)[0]
		got, err := c.Nearest(ctx, "enc", q, 3)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteForce(db, q); got.IDs[0] != want {
			t.Fatalf("query %d: nearest %d, brute force %d", i, got.IDs[0], want)
		}
		var d float64
		for k := range q {
			t := float64(db[got.IDs[0]][k] - q[k])
			d += t * t
		}
		if math.Abs(got.Scores[0]-d) > 1e-2*d {
			t.Fatalf("query %d: reported distance² %g, the vector's is %g", i, got.Scores[0], d)
		}
	}
	c.Close()

	other, err := client.NewKeys(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := openStore(filepath.Join(dir, "store"), other)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	// Another key set on the same device identity is no owner of the
	// database and holds no grant: it cannot even verify the manifest.
	if _, err := c2.Nearest(ctx, "enc", db[0], 1); !errors.Is(err, client.ErrNoGrant) {
		t.Fatalf("another key's query: %v, want ErrNoGrant", err)
	}
}

// A client given no compiled programs (an application that links only the
// typed PIR path) refuses vector and BGV PIR databases with ErrNoPrograms,
// and a vector database made by one that has them stays readable by it.
func TestNoProgramsRefusesCompiledKinds(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	bare := client.New(e.c.Device(), e.keys)
	if _, err := bare.CreateVectors(ctx, "v", 8, client.VectorOptions{}); !errors.Is(err, client.ErrNoPrograms) {
		t.Fatalf("vectors without programs: %v, want ErrNoPrograms", err)
	}
	if _, err := bare.CreatePIR(ctx, "b", 16, client.PIROptions{Scheme: client.SchemeBGV}); err != nil {
		t.Fatal(err) // the manifest alone needs no program
	}
	if _, err := bare.Load(ctx, "b", strings.NewReader("alpha\nbravo\n"), client.LoadOptions{Records: dataset.Lines}); err != nil {
		t.Fatal(err) // nor does writing the plaintexts
	}
	if _, err := bare.Get(ctx, "b", 1); !errors.Is(err, client.ErrNoPrograms) {
		t.Fatalf("a BGV PIR query without programs: %v, want ErrNoPrograms", err)
	}
	rec, err := e.c.Get(ctx, "b", 1)
	if err != nil || string(bytes.TrimRight(rec, "\x00")) != "bravo" {
		t.Fatalf("with programs: %q, %v", rec, err)
	}
}
