package client_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
)

// TestBytesMeasuredOnTheConnection: through a TLS connection, a PIR Get
// and a Nearest report the bytes their RPCs moved, counted by the gRPC
// stats handler: the ciphertexts' payloads plus the messages' framing
// (names, lengths, headers: well under 4 KiB), never less.
func TestBytesMeasuredOnTheConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := tlsUsers(t, "alice")["alice"]
	const size, n = 48, 300
	data := secretRecords(n, size)
	if _, err := c.CreatePIR(ctx, "acct", size, client.PIROptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "acct", bytes.NewReader(data), client.LoadOptions{Records: dataset.FixedSize}); err != nil {
		t.Fatal(err)
	}
	q, err := c.GetQuery(ctx, "acct", 7)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q.Record, data[7*size:8*size]) {
		t.Fatal("record 7 differs")
	}
	wire := q.QueryBytes + q.AnswerBytes
	if !q.Measured || q.PayloadBytes == 0 || wire < q.PayloadBytes || wire > q.PayloadBytes+4096 {
		t.Fatalf("get: %d bytes measured (%v) for %d bytes of ciphertexts", wire, q.Measured, q.PayloadBytes)
	}
	t.Logf("get: %d up + %d down on the connection, %d of ciphertexts", q.QueryBytes, q.AnswerBytes, q.PayloadBytes)

	const dim = 16
	r := rand.New(rand.NewPCG(3, 4))
	vecs := gaussian(r, 200, dim)
	var buf bytes.Buffer
	if err := dataset.WriteFVecs(&buf, vecs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVectors(ctx, "vecs", dim, client.VectorOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "base.fvecs")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := c.Load(ctx, "vecs", f, client.LoadOptions{Vectors: dataset.FVecs}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Nearest(ctx, "vecs", vecs[5], 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IDs) != 1 || res.IDs[0] != 5 {
		t.Fatalf("nearest to vector 5: %v", res.IDs)
	}
	wire = res.QueryBytes + res.AnswerBytes
	if res.PayloadBytes == 0 || wire < res.PayloadBytes || wire > res.PayloadBytes+4096 {
		t.Fatalf("nearest: %d bytes measured for %d bytes of ciphertexts", wire, res.PayloadBytes)
	}
	t.Logf("nearest: %d up + %d down on the connection, %d of ciphertexts", res.QueryBytes, res.AnswerBytes, res.PayloadBytes)
}
