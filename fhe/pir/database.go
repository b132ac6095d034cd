package pir

import (
	"context"
	"fmt"
)

// Database is the server's view of the stored data: Plaintext writes into
// dst (of length N) the compact coefficients of plaintext p — N values
// below the plaintext modulus, the 16-bit chunks of EncodePlaintext — and
// must zero-fill dst for Plaintexts ≤ p < Rows·Cols. The reference Server
// asks only for p < Plaintexts, from several goroutines at once.
type Database interface {
	Plaintext(ctx context.Context, p int, dst []uint64) error
}

// MemoryDatabase is a Database over the records held in memory, their
// bytes concatenated; plaintexts are encoded when asked for.
type MemoryDatabase struct {
	shape Shape
	data  []byte
}

// NewMemoryDatabase returns the database of shape whose record i is
// data[i·RecordSize : (i+1)·RecordSize]. The data is not copied.
func NewMemoryDatabase(shape Shape, data []byte) (*MemoryDatabase, error) {
	if shape.RecordSize < 1 || shape.PerPlaintext < 1 {
		return nil, fmt.Errorf("pir: memory database: %w: zero shape", ErrShape)
	}
	if len(data) != shape.Records*shape.RecordSize {
		return nil, fmt.Errorf("pir: memory database: %w: %d bytes for %d records of %d bytes", ErrRecords, len(data), shape.Records, shape.RecordSize)
	}
	return &MemoryDatabase{shape: shape, data: data}, nil
}

// Record returns record i's bytes (aliasing the database).
func (d *MemoryDatabase) Record(i int) ([]byte, error) {
	if i < 0 || i >= d.shape.Records {
		return nil, fmt.Errorf("pir: memory database: %w: %d not in [0, %d)", ErrIndexOutOfRange, i, d.shape.Records)
	}
	return d.data[i*d.shape.RecordSize : (i+1)*d.shape.RecordSize], nil
}

// Plaintext implements Database.
func (d *MemoryDatabase) Plaintext(ctx context.Context, p int, dst []uint64) error {
	s := d.shape
	if len(dst) != s.N {
		return fmt.Errorf("pir: memory database: %w: destination of %d coefficients, want %d", ErrDatabase, len(dst), s.N)
	}
	if p < 0 || p >= s.Rows*s.Cols {
		return fmt.Errorf("pir: memory database: %w: plaintext %d not in [0, %d)", ErrDatabase, p, s.Rows*s.Cols)
	}
	lo := min(p*s.PerPlaintext*s.RecordSize, len(d.data))
	hi := min((p+1)*s.PerPlaintext*s.RecordSize, len(d.data))
	b := d.data[lo:hi]
	for k := range dst {
		dst[k] = uint64(chunk(b, k))
	}
	return nil
}
