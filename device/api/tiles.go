package api

import "fmt"

// Where a StoredBinding finds instance k: the placement both the device
// (reading) and the clients (writing) follow.

// TilePosition is the stored position of instance k of count instances
// laid out in tiles of tileRows rows of rowLength (row-major when either
// is 0 or 1): tiles follow one another, a tile holds its rows column by
// column, and the last tile holds the rows left.
func TilePosition(k, count, rowLength, tileRows int64) int64 {
	if rowLength <= 1 || tileRows <= 1 || count%rowLength != 0 {
		return k
	}
	r, c := k/rowLength, k%rowLength
	first := r - r%tileRows
	h := min(tileRows, count/rowLength-first)
	return first*rowLength + c*h + (r - first)
}

// StoredObjectName is the name of object j of a stored binding.
func StoredObjectName(prefix string, j int64) string { return fmt.Sprintf("%s%06d", prefix, j) }

// TileInstance is the instance stored at position p: the inverse of
// TilePosition.
func TileInstance(p, count, rowLength, tileRows int64) int64 {
	if rowLength <= 1 || tileRows <= 1 || count%rowLength != 0 {
		return p
	}
	first := p / (tileRows * rowLength) * tileRows
	h := min(tileRows, count/rowLength-first)
	o := p - first*rowLength
	return (first+o%h)*rowLength + o/h
}
