package api

import "testing"

// TilePosition and TileInstance are inverse permutations of the
// instances, and a tile is read column by column.
func TestTilePositions(t *testing.T) {
	for _, c := range [][3]int64{{1, 1, 8}, {4, 256, 8}, {13, 5, 4}, {16, 8, 8}, {7, 3, 1}, {12, 6, 0}} {
		rows, rowLen, tile := c[0], c[1], c[2]
		count := rows * rowLen
		seen := make([]bool, count)
		for k := int64(0); k < count; k++ {
			p := TilePosition(k, count, rowLen, tile)
			if p < 0 || p >= count || seen[p] {
				t.Fatalf("%v: instance %d at position %d (taken or out of range)", c, k, p)
			}
			seen[p] = true
			if back := TileInstance(p, count, rowLen, tile); back != k {
				t.Fatalf("%v: position %d holds %d, want %d", c, p, back, k)
			}
		}
		if tile > 1 && rows >= tile && rowLen > 1 {
			// Rows 0 and 1 of column 0 are neighbours; column 1 follows.
			if TilePosition(rowLen, count, rowLen, tile) != 1 || TilePosition(1, count, rowLen, tile) != tile {
				t.Fatalf("%v: tile not column by column", c)
			}
		}
	}
}
