package lwepir

import "context"

// Tiles is where the server reads the database: tile k holds columns
// [k·N, (k+1)·N) of every row, Rows × N bytes row-major. A store streams
// them; nothing holds the whole database.
type Tiles interface {
	ReadTile(ctx context.Context, k int, dst []byte) error
}

// Diagonals is where the server reads the precomputed plaintexts of H:
// diagonal i as 2·HintSlots... limbs (NTT and Montgomery form), in the order
// PlaintextIndex gives.
type Diagonals interface {
	ReadDiagonal(ctx context.Context, i int, dst []uint64) error
}

// MemTiles is a database held in memory (tests, small tools).
type MemTiles [][]byte

// ReadTile copies tile k.
func (m MemTiles) ReadTile(_ context.Context, k int, dst []byte) error {
	copy(dst, m[k])
	return nil
}

// MemDiagonals holds the precomputed diagonals in memory.
type MemDiagonals [][]uint64

// ReadDiagonal copies diagonal i.
func (m MemDiagonals) ReadDiagonal(_ context.Context, i int, dst []uint64) error {
	copy(dst, m[i])
	return nil
}
