package pirserver

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/objname"
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

// mapPacker opens generation gen's packer in place: its objects pinned and
// mapped, each factor polynomial's pages handed to the packer as they lie
// in the store's files (lwepir.LoadPackerPieces), the a-parts copied. It
// reports false where the store cannot be used so (no mappings here, a
// big-endian host, pages that do not cut a polynomial in whole pieces of
// whole words): the caller reads the packer instead. The unmap function
// releases the mappings and the pins.
func (s *Server) mapPacker(gen string, p lwepir.Params, shape lwepir.Shape) (*lwepir.Packer, func(), error, bool) {
	n := p.N()
	page := s.cfg.Store.PageSize()
	if !littleEndian || page%32 != 0 || (8*n)%page != 0 {
		return nil, nil, nil, false
	}
	pieceWords := page / 8
	words, err := lwepir.PackerFactorWords(p, shape)
	if err != nil {
		return nil, nil, malformed("%v", err), true
	}
	order, err := packerOrder(words, n)
	if err != nil {
		return nil, nil, err, true
	}
	if err := s.checkPackerTotal(gen, p, len(order)); err != nil {
		return nil, nil, err, true
	}
	factors := make([][][][]uint64, len(words))
	for k, w := range words {
		factors[k] = make([][][]uint64, w/n)
	}
	aParts := make([][]uint32, len(words))
	var objs []*store.Object
	var maps []*store.Mapped
	unmap := func() {
		for _, m := range maps {
			m.Release()
		}
		for _, o := range objs {
			o.Release()
		}
	}
	fail := func(err error) (*lwepir.Packer, func(), error, bool) {
		unmap()
		return nil, nil, err, true
	}
	logN := uint8(bits.Len(uint(n)) - 1)
	prefix := objname.LWEPacker(gen)
	err = faultsAsErrors(func() error {
		for j, i := int64(0), 0; i < len(order); j++ {
			name := objname.Stored(prefix, j)
			o, err := s.cfg.Store.Acquire(name)
			if err != nil {
				return fmt.Errorf("device: querylwe: %w: stored object %q: %w", api.ErrNotFound, name, err)
			}
			objs = append(objs, o)
			sh := o.Info().Shape
			if err := checkPackerObject(name, sh, logN, len(order)-i); err != nil {
				return err
			}
			m, err := o.Map()
			if err != nil {
				return errUnmapped{err}
			}
			maps = append(maps, m)
			// The first query's packing reads every factor, beside its
			// scan: have the kernel read them ahead, not a page a fault.
			o.Prefetch()
			for l := 0; l < sh.Limbs; l, i = l+1, i+1 {
				pages, err := m.LimbPages(0, l)
				if err != nil {
					return fmt.Errorf("device: querylwe: packer object %q: %w", name, err)
				}
				pieces := make([][]uint64, len(pages))
				for q, pg := range pages {
					if len(pg) != page || uintptr(unsafe.Pointer(unsafe.SliceData(pg)))%8 != 0 {
						return errUnmapped{fmt.Errorf("packer object %q: a page of %d bytes is not whole aligned words", name, len(pg))}
					}
					pieces[q] = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(pg))), pieceWords)
				}
				sl := order[i]
				if sl.j >= 0 {
					factors[sl.k][sl.j] = pieces
					continue
				}
				a := make([]uint32, 0, n)
				for _, pc := range pieces {
					for _, w := range pc {
						if w>>32 != 0 {
							return malformed("packer object %q: an a-part word out of range", name)
						}
						a = append(a, uint32(w))
					}
				}
				aParts[sl.k] = a
			}
		}
		return nil
	})
	var um errUnmapped
	if errors.As(err, &um) {
		unmap()
		return nil, nil, nil, false
	}
	if err != nil {
		return fail(err)
	}
	pk, err := lwepir.LoadPackerPieces(p, shape, pieceWords, func(k, j int) ([][]uint64, error) { return factors[k][j], nil }, aParts,
		faultsAsErrors)
	if err != nil {
		return fail(malformed("packer of %q: %v", gen, err))
	}
	return pk, unmap, nil, true
}

// errUnmapped: the store cannot hand the packer's pages in place.
type errUnmapped struct{ err error }

func (e errUnmapped) Error() string { return e.err.Error() }
