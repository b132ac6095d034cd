package session

import (
	"context"
	"fmt"

	"github.com/tuneinsight/lattigo/v6/schemes/bgv"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// PIRLoader writes a PIR database from its records in order, streaming:
// the shape (how many rows) is known only at the end, so it holds at most
// one tile of plaintexts (PIRTileRows rows of pir.MaxCols: 32 MiB at
// N = 2^13) and writes every full tile as it completes. A plaintext's
// stored words are its records' bytes back to back (16-bit little-endian
// chunks, pir.EncodePlaintext16), zero-padded.
type PIRLoader struct {
	sink       ObjectSink
	db         string
	params     bgv.Parameters
	recordSize int
	perPt      int // records per plaintext
	ptBytes    int // 2N
	logN       int

	records int
	cur     []byte   // the plaintext being filled
	tile    [][]byte // finished plaintexts of the current tile (row-major)
	first   int      // first plaintext of the tile
	// objects under construction: positions [objFirst, objFirst+len(obj))
	obj      [][]byte
	objIndex int64
	written  int64
	progress func(written int64)
}

// NewPIRLoader starts a database of recordSize-byte records under db.
func NewPIRLoader(sink ObjectSink, db string, params bgv.Parameters, recordSize int, progress func(written int64)) (*PIRLoader, error) {
	n := params.N()
	if recordSize < 1 || recordSize > 2*n {
		return nil, fmt.Errorf("session: %w: records of %d bytes (a plaintext holds 1 to %d)", pir.ErrRecords, recordSize, 2*n)
	}
	logN := 0
	for 1<<logN < n {
		logN++
	}
	return &PIRLoader{sink: sink, db: db, params: params, recordSize: recordSize, perPt: 2 * n / recordSize,
		ptBytes: 2 * n, logN: logN, progress: progress}, nil
}

// Add appends a record (at most recordSize bytes; shorter ones are
// zero-padded).
func (l *PIRLoader) Add(ctx context.Context, rec []byte) error {
	if len(rec) > l.recordSize {
		return fmt.Errorf("session: %w: record %d has %d bytes, the database's records have %d", pir.ErrRecords, l.records, len(rec), l.recordSize)
	}
	if l.cur == nil {
		l.cur = make([]byte, l.ptBytes)
	}
	off := (l.records % l.perPt) * l.recordSize
	copy(l.cur[off:], rec)
	l.records++
	if l.records%l.perPt == 0 {
		return l.finishPlaintext(ctx)
	}
	return nil
}

// Records is the number of records added.
func (l *PIRLoader) Records() int { return l.records }

func (l *PIRLoader) finishPlaintext(ctx context.Context) error {
	l.tile = append(l.tile, l.cur)
	l.cur = nil
	// Once a tile of full-width rows is complete the columns are
	// pir.MaxCols whatever the final size: write it.
	if len(l.tile) == PIRTileRows*pir.MaxCols {
		return l.flushTile(ctx, pir.MaxCols, PIRTileRows)
	}
	return nil
}

// flushTile writes the held tile (h rows of cols, row-major, missing
// plaintexts zero) column by column.
func (l *PIRLoader) flushTile(ctx context.Context, cols, h int) error {
	for c := 0; c < cols; c++ {
		for r := 0; r < h; r++ {
			var pt []byte
			if k := r*cols + c; k < len(l.tile) {
				pt = l.tile[k]
			}
			if err := l.emit(ctx, pt); err != nil {
				return err
			}
		}
	}
	l.first += len(l.tile)
	l.tile = l.tile[:0]
	return nil
}

// emit places the next stored position's plaintext (nil: zero).
func (l *PIRLoader) emit(ctx context.Context, pt []byte) error {
	if pt == nil {
		pt = make([]byte, l.ptBytes)
	}
	l.obj = append(l.obj, pt)
	if len(l.obj) == PIRPerObject {
		return l.flushObject(ctx)
	}
	return nil
}

func (l *PIRLoader) flushObject(ctx context.Context) error {
	if len(l.obj) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	name := api.StoredObjectName(PIRPlaintextPrefix(l.db), l.objIndex)
	shp := object.Shape{Polys: len(l.obj), Limbs: 1, LogN: uint8(l.logN), WordSize: 2}
	if err := l.sink(ctx, name, shp, l.obj); err != nil {
		return fmt.Errorf("session: write %s: %w", name, err)
	}
	l.written += shp.Bytes()
	l.objIndex++
	l.obj = nil
	if l.progress != nil {
		l.progress(l.written)
	}
	return nil
}

// Finish writes what is held and the zero plaintexts that complete the
// shape, and returns the shape and the bytes written.
func (l *PIRLoader) Finish(ctx context.Context) (pir.Shape, int64, error) {
	if l.records == 0 {
		return pir.Shape{}, 0, fmt.Errorf("session: %w: no records", pir.ErrRecords)
	}
	if l.cur != nil {
		l.tile = append(l.tile, l.cur)
		l.cur = nil
	}
	shape, err := pir.NewShape(l.params, l.recordSize, l.records)
	if err != nil {
		return pir.Shape{}, 0, err
	}
	// The rows left (data, then zero): the held tile's rows first.
	for row := l.first / shape.Cols; row < shape.Rows; row += PIRTileRows {
		h := min(PIRTileRows, shape.Rows-row)
		if err := l.flushTile(ctx, shape.Cols, h); err != nil {
			return pir.Shape{}, 0, err
		}
	}
	if err := l.flushObject(ctx); err != nil {
		return pir.Shape{}, 0, err
	}
	return shape, l.written, nil
}
