package matvec

import (
	"errors"
	"fmt"
)

// ErrShape reports arguments MulAdd cannot take: a tile that is not a whole
// number of rows, or a query window outside the query.
var ErrShape = errors.New("matvec: shape")

// RowBlock is how many rows the vector kernels take at once: a call whose
// rows are not a multiple of it runs the rest in Go, rebuilding the query's
// words each time, so a caller that splits a tile gives each call whole
// blocks.
const RowBlock = 4

// Check reports whether MulAdd may take an accumulator of rows entries, a
// tile of tileLen bytes, query q and offset off: rows > 0, tileLen a
// multiple of rows, 0 ≤ off and off + tileLen/rows ≤ q.Len(). It costs a few
// comparisons; callers holding sizes from outside (a client's query, a
// stored object) check them here first.
func Check(rows, tileLen int, q *Query, off int) error {
	switch {
	case q == nil:
		return fmt.Errorf("%w: no query", ErrShape)
	case rows <= 0 || tileLen < 0 || tileLen%rows != 0:
		return fmt.Errorf("%w: a tile of %d bytes is not %d whole rows", ErrShape, tileLen, rows)
	case off < 0 || off > q.n || tileLen/rows > q.n-off:
		return fmt.Errorf("%w: columns [%d, %d) outside a query of %d", ErrShape, off, off+tileLen/rows, q.n)
	}
	return nil
}

// MulAdd adds to acc[i], modulo 2^32, the dot product of row i of tile with
// q[off : off+cols], where tile is a row-major byte matrix of len(acc) rows
// and cols = len(tile)/len(acc) columns. It is exact for every input. The
// vector kernels take columns in 64s and rows in fours (the rest runs in Go),
// so cols a multiple of 64 is the fast case.
//
// Precondition: Check(len(acc), len(tile), q, off) is nil (or acc is
// empty, which adds nothing). Like an out-of-range slice index, a violation
// panics, with the error Check names; it never reads outside the slices.
func MulAdd(acc []uint32, tile []byte, q *Query, off int) {
	accs, qs := [1][]uint32{acc}, [1]*Query{q}
	MulAddBatch(accs[:], tile, qs[:], off)
}

// MulAddBatch does what MulAdd does for several queries, reading tile once:
// accs[b][i] += row_i · qs[b][off : off+cols] (mod 2^32). Every accs[b]
// has the same length, the rows of tile; each query passes Check.
func MulAddBatch(accs [][]uint32, tile []byte, qs []*Query, off int) {
	if len(accs) != len(qs) {
		panic(fmt.Errorf("%w: %d accumulators for %d queries", ErrShape, len(accs), len(qs)))
	}
	if len(qs) == 0 || len(accs[0]) == 0 {
		return
	}
	rows := len(accs[0])
	same := true
	for b, q := range qs {
		if len(accs[b]) != rows {
			panic(fmt.Errorf("%w: accumulator %d has %d rows, not %d", ErrShape, b, len(accs[b]), rows))
		}
		if err := Check(rows, len(tile), q, off); err != nil {
			panic(err)
		}
		same = same && q.kind == qs[0].kind
	}
	if same {
		mulAdd(qs[0].kind, accs, tile, qs, off)
		return
	}
	// Queries prepared for different kernels (the selection changed between
	// them): each group is its own pass.
	for _, k := range kernels() {
		var ga [][]uint32
		var gq []*Query
		for b, q := range qs {
			if q.kind == k {
				ga, gq = append(ga, accs[b]), append(gq, q)
			}
		}
		if len(gq) > 0 {
			mulAdd(k, ga, tile, gq, off)
		}
	}
}

// mulAdd runs kernel k, for which every query is laid out, on checked
// arguments.
func mulAdd(k kernel, accs [][]uint32, tile []byte, qs []*Query, off int) {
	if k == kernelGo {
		mulAddGo(accs, tile, qs, off)
		return
	}
	mulAddAsm(k, accs, tile, qs, off)
}
