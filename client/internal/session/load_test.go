package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// lweDB loads random records into a store through LWELoader and opens a
// session on them behind an in-process device.
func lweDB(t testing.TB, records, size int) (*LWESession, [][]byte, *device.Device) {
	t.Helper()
	p := lwepir.Test()
	want, err := lwepir.NewShape(p, records, size)
	if err != nil {
		t.Fatal(err)
	}
	s, recs, dev, _ := loadLWEDB(t, records, size, func(sink ObjectSink, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
		return NewLWELoader(sink, "db/g1", p, want.Rows, size, seed)
	})
	return s, recs, dev
}

// loadLWEDB loads random records through the loader newLoader makes and
// opens a session on them behind an in-process device; it returns the
// loader too.
func loadLWEDB(t testing.TB, records, size int, newLoader func(ObjectSink, [lwepir.SeedSize]byte) (*LWELoader, error)) (*LWESession, [][]byte, *device.Device, *LWELoader) {
	t.Helper()
	p := lwepir.Test()
	st := openTestStore(t)
	ctx := context.Background()
	var seed [lwepir.SeedSize]byte
	rand.Read(seed[:])
	l, err := newLoader(storeSink(st), seed)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([][]byte, records)
	for i := range recs {
		recs[i] = make([]byte, size)
		rand.Read(recs[i])
		if err := l.Add(ctx, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	shape, err := l.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lim := device.DefaultLimits()
	lim.Workers = 2
	dev, err := device.New(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := lwepir.DeriveSecretKey(p, bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLWESession(ctx, dev, "db/g1", p, shape, seed, sk, "db/members/me/keys/k", false)
	if err != nil {
		t.Fatal(err)
	}
	return s, recs, dev, l
}

// A loader that is not told the database's size (a stream) lays it out as
// one that is: NewShape's rows for the records it got, stored bytes exactly
// those of that shape, every record read back. Past its pending bound it
// takes the rows of its estimate, or without one those of the largest
// databases, and the records still come back.
func TestLWELoaderOfUnknownSize(t *testing.T) {
	p := lwepir.Test()
	for _, c := range []struct{ records, size, pending, estimate, pastRows int }{
		{1, 48, MaxPendingBytes, 0, 0},
		{7, 5, MaxPendingBytes, 0, 0},
		{300, 48, MaxPendingBytes, 0, 0},
		{3000, 48, MaxPendingBytes, 0, 0},
		{300, 48, 100 * 48, 0, p.HintSlots()}, // past the bound at record 101
		{3000, 48, 100 * 48, 200000, 128},     // NewShape's rows for 200000 records, not 3000's 64
	} {
		t.Run(fmt.Sprintf("%dx%dB/%d/%d", c.records, c.size, c.pending, c.estimate), func(t *testing.T) {
			s, recs, _, l := loadLWEDB(t, c.records, c.size, func(sink ObjectSink, seed [lwepir.SeedSize]byte) (*LWELoader, error) {
				l, err := NewSizedLWELoader(sink, "db/g1", p, c.size, seed, 0, c.estimate)
				if l != nil {
					l.maxPending = c.pending
				}
				return l, err
			})
			want, err := lwepir.NewShape(p, c.records, c.size)
			if err != nil {
				t.Fatal(err)
			}
			if c.pastRows > 0 {
				want.Rows = c.pastRows
			}
			if s.Shape.Rows != want.Rows || l.Records() != c.records {
				t.Fatalf("shape %+v, %d records; want %d rows, %d records", s.Shape, l.Records(), want.Rows, c.records)
			}
			if got := l.Written(); got != s.Shape.StoredBytes(p) {
				t.Fatalf("wrote %d bytes, the shape %+v stores %d", got, s.Shape, s.Shape.StoredBytes(p))
			}
			for _, i := range []int{0, c.records / 2, c.records - 1} {
				q, err := s.Get(context.Background(), i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(q.Record, recs[i]) {
					t.Fatalf("record %d differs", i)
				}
			}
		})
	}
}
