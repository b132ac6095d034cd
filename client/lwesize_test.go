package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// A database loaded from a stream (no size: a pipe, as each cluster shard
// gets) is laid out for the records it holds, exactly as if its size had
// been given — not in the 8192-row matrix a stream used to get, which
// stored 272 MiB for any small database — and reads back byte for byte.
func TestStreamLoadIsSizedByItsRecords(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	p := lwepir.Default()
	for _, c := range []struct{ n, size int }{{1, 1}, {256, 256}, {777, 100}} {
		t.Run(fmt.Sprintf("%dx%dB", c.n, c.size), func(t *testing.T) {
			name := fmt.Sprintf("db%d", c.n)
			if _, err := e.c.CreatePIR(ctx, name, c.size, client.PIROptions{Scheme: client.SchemeLWE}); err != nil {
				t.Fatal(err)
			}
			data := records(uint64(c.n), c.n, c.size)
			// io.MultiReader hides bytes.Reader's Seek: the load cannot
			// measure the input.
			in, err := e.c.Load(ctx, name, io.MultiReader(bytes.NewReader(data)), client.LoadOptions{Records: dataset.FixedSize})
			if err != nil {
				t.Fatal(err)
			}
			want, err := lwepir.NewShape(p, c.n, in.StoredRecordSize())
			if err != nil {
				t.Fatal(err)
			}
			if in.Records != c.n || in.Rows != want.Rows || in.Cols != want.Cols || in.Bytes != want.StoredBytes(p) {
				t.Fatalf("loaded %d records in %d × %d, %d bytes; want %d × %d, %d bytes", in.Records, in.Rows, in.Cols, in.Bytes,
					want.Rows, want.Cols, want.StoredBytes(p))
			}
			if in.Bytes > 32<<20 {
				t.Fatalf("%d bytes stored for %d records of %d bytes", in.Bytes, c.n, c.size)
			}
			for _, i := range []int{0, c.n - 1} {
				got, err := e.c.Get(ctx, name, i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data[i*c.size:(i+1)*c.size]) {
					t.Fatalf("record %d differs", i)
				}
			}
		})
	}
}
