package lwepir

import "context"

// Tiles is where the server reads the database: tile k holds columns
// [k·N, (k+1)·N) of every row, Rows × N bytes row-major, read in Blocks()
// equal blocks of whole rows. A store streams them: a scan computes on
// each block while it is in cache, and nothing holds the whole database.
type Tiles interface {
	Blocks() int
	// VisitBlock hands block b of tile k to f in pieces of whole rows: the
	// first row's index within the block and the rows' bytes, valid during
	// the call only. f may run on several goroutines at once, for disjoint
	// pieces.
	VisitBlock(ctx context.Context, k, b int, f func(row int, rows []byte)) error
}

// Diagonals is where the server reads the precomputed plaintexts of H:
// diagonal i as 2·HintSlots... limbs (NTT and Montgomery form), in the order
// PlaintextIndex gives.
type Diagonals interface {
	ReadDiagonal(ctx context.Context, i int, dst []uint64) error
}

// MemTiles is a database held in memory (tests, small tools).
type MemTiles [][]byte

// Blocks is 1: a tile is one block.
func (m MemTiles) Blocks() int { return 1 }

// VisitBlock hands tile k to f whole.
func (m MemTiles) VisitBlock(_ context.Context, k, _ int, f func(row int, rows []byte)) error {
	f(0, m[k])
	return nil
}

// MemDiagonals holds the precomputed diagonals in memory.
type MemDiagonals [][]uint64

// ReadDiagonal copies diagonal i.
func (m MemDiagonals) ReadDiagonal(_ context.Context, i int, dst []uint64) error {
	copy(dst, m[i])
	return nil
}
