package lwepir

import (
	"bytes"
	"context"
	"testing"

	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// SimplePIR's mode over the same kernel: a client holding the hint H'
// (ComputeHint) sends the LWE vector alone, the server only scans, and
// DecodeWithHint turns the column into the records, byte for byte, for the
// first, a middle and the last record; a hint or column of the wrong
// length is refused.
func TestQueryVectorDecodesWithDownloadedHint(t *testing.T) {
	p := Test()
	const records, size = 700, 13
	shape, err := NewShape(p, records, size)
	if err != nil {
		t.Fatal(err)
	}
	tiles, recs := recordDB(t, p, shape, records)
	ctx := context.Background()
	pp := newPIR(t, p, shape, tiles)
	cl, srv := pp.cl, pp.srv
	hint, err := ComputeHint(ctx, p, shape, pp.seed, tiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []int{0, records / 2, records - 1} {
		col, _ := cl.Column(r)
		q, st, err := cl.QueryVector(col)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := srv.Scan(ctx, []*matvec.Query{matvec.NewQuery(q)}, tiles, nil)
		if err != nil {
			t.Fatal(err)
		}
		column, err := cl.DecodeWithHint(st, cols[0], hint)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cl.Record(column, r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, recs[r]) {
			t.Fatalf("record %d: got %x, want %x", r, got, recs[r])
		}
		if _, err := cl.DecodeWithHint(st, cols[0], hint[1:]); err == nil {
			t.Fatal("a short hint decoded")
		}
		if _, err := cl.DecodeWithHint(st, cols[0][1:], hint); err == nil {
			t.Fatal("a short column decoded")
		}
	}
}
