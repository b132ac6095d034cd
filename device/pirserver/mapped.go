package pirserver

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// mappedDiagonals is a source whose hint diagonals the ring stage
// reads in place from the store's mappings, page by page (see
// lwepir.DiagonalPieces): no diagonal is copied out, and no page's
// payload CRC is computed on the query path (the owner authenticates the
// answer end to end, as for the tiles; scrubbing checks the CRCs).
type mappedDiagonals struct {
	*source
	maps []*store.Mapped // by diagonal object
}

// mapDiagonals maps every pinned diagonal object, or reports why the
// source must read them instead (no mappings here, a big-endian host, or
// pages that are not whole words).
func mapDiagonals(src *source) (*mappedDiagonals, bool) {
	if !littleEndian || src.pageBytes%8 != 0 {
		return nil, false
	}
	md := &mappedDiagonals{source: src}
	for _, o := range src.diags {
		m, err := o.Map()
		if err != nil {
			md.release()
			return nil, false
		}
		md.maps = append(md.maps, m)
	}
	return md, true
}

func (md *mappedDiagonals) release() {
	for _, m := range md.maps {
		m.Release()
	}
	md.maps = nil
}

// DiagonalPieces returns limb l of diagonal i as its pages' words, in place.
func (md *mappedDiagonals) DiagonalPieces(_ context.Context, i, l int) ([][]uint64, error) {
	pages, err := md.maps[i/md.b1].LimbPages(i%md.b1, l)
	if err != nil {
		return nil, err
	}
	out := make([][]uint64, len(pages))
	for k, p := range pages {
		if len(p)%8 != 0 || uintptr(unsafe.Pointer(unsafe.SliceData(p)))%8 != 0 {
			return nil, fmt.Errorf("%w: diagonal %d: a page of %d bytes is not whole aligned words", store.ErrCorrupt, i, len(p))
		}
		out[k] = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(p))), len(p)/8)
		md.bytes.Add(int64(len(p)))
	}
	return out, nil
}

var _ lwepir.DiagonalPieces = (*mappedDiagonals)(nil)

// faultsAsErrors runs f with memory faults (a store file cut short under
// its mapping) turned into a named error rather than a crash of the
// daemon.
func faultsAsErrors(f func() error) error {
	return store.CatchFaults(f, func(addr uintptr) error {
		return fmt.Errorf("%w: stored page unreadable (fault at %#x: a store file cut short?)", store.ErrCorrupt, addr)
	})
}
