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

// DiagonalPieces is Diagonals readable in place, in pieces (a store's
// mappings of its pages). The ring stage then multiplies piece by piece,
// holding the baby steps and partial sums of one piece in cache, and
// copies no diagonal; read whole, each diagonal (128 KiB at the default
// parameters) is copied out, and the baby steps (16 MiB at a 4 GiB
// database's layout) stream from memory once per giant step.
type DiagonalPieces interface {
	Diagonals
	// DiagonalPieces returns prime limb l of diagonal i in place as
	// pieces of one length, a power of two, in slot order: valid for the
	// rest of the evaluation, read only.
	DiagonalPieces(ctx context.Context, i, l int) ([][]uint64, error)
}

// MemPieces is MemDiagonals read in place in pieces of Piece words: the
// ring stage's in-place path over memory (tests).
type MemPieces struct {
	MemDiagonals
	Limbs, Piece int
}

// DiagonalPieces cuts limb l of diagonal i into pieces.
func (m MemPieces) DiagonalPieces(_ context.Context, i, l int) ([][]uint64, error) {
	n := len(m.MemDiagonals[i]) / m.Limbs
	limb := m.MemDiagonals[i][l*n : (l+1)*n]
	var out [][]uint64
	for k := 0; k < n; k += m.Piece {
		out = append(out, limb[k:k+m.Piece])
	}
	return out, nil
}
