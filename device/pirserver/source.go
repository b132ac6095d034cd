package pirserver

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
	"github.com/rosemary-fhe/rosemary/fhe/matvec"
)

// littleEndian: the host stores words little-endian, so stored 64-bit
// words are read straight into place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// source reads a generation's pinned tiles and diagonals for lwepir.
type source struct {
	tiles, diags        []*store.Object
	b1, slots           int
	rowBytes, pageBytes int // a page of whole rows is scanned where it was read
	bytes               atomic.Int64
	bufMu               sync.Mutex
	buf                 []byte
	ahead               *prefetcher // nil until the tiles are pinned
}

// pin acquires the tiles and hint diagonals of generation gen, checking
// every object's size and the diagonals' shape.
func (s *Server) pin(gen string, p lwepir.Params, shape lwepir.Shape, diagShape object.Shape, diagObjects int64) (*source, error) {
	src := &source{b1: diagShape.Polys, slots: p.HintSlots(), rowBytes: p.N(), pageBytes: s.cfg.Store.PageSize()}
	var err error
	if src.tiles, err = s.pinAll(objname.LWETiles(gen), int64(shape.Tiles(p)), object.Shape{}, int64(shape.TileBytes(p))); err != nil {
		return nil, err
	}
	src.ahead = newPrefetcher(src.tiles)
	if src.diags, err = s.pinAll(objname.LWEDiagonals(gen), diagObjects, diagShape, diagShape.Bytes()); err != nil {
		src.release()
		return nil, err
	}
	if src.Blocks() < 1 || shape.Rows%src.Blocks() != 0 {
		src.release()
		return nil, malformed("tiles stored in %d limbs", src.Blocks())
	}
	return src, nil
}

// pinTiles acquires the tiles of generation gen only (the packed mode
// reads no diagonals).
func (s *Server) pinTiles(gen string, p lwepir.Params, shape lwepir.Shape) (*source, error) {
	src := &source{slots: p.HintSlots(), rowBytes: p.N(), pageBytes: s.cfg.Store.PageSize()}
	var err error
	if src.tiles, err = s.pinAll(objname.LWETiles(gen), int64(shape.Tiles(p)), object.Shape{}, int64(shape.TileBytes(p))); err != nil {
		return nil, err
	}
	src.ahead = newPrefetcher(src.tiles)
	if src.Blocks() < 1 || shape.Rows%src.Blocks() != 0 {
		src.release()
		return nil, malformed("tiles stored in %d limbs", src.Blocks())
	}
	return src, nil
}

// pinAll acquires the count objects under prefix, checking every object's
// size (and shape, if given).
func (s *Server) pinAll(prefix string, count int64, shape object.Shape, bytes int64) ([]*store.Object, error) {
	objs := make([]*store.Object, 0, count)
	fail := func(err error) ([]*store.Object, error) {
		for _, o := range objs {
			o.Release()
		}
		return nil, err
	}
	for j := int64(0); j < count; j++ {
		name := objname.Stored(prefix, j)
		o, err := s.cfg.Store.Acquire(name)
		if err != nil {
			return fail(fmt.Errorf("device: querylwe: %w: stored object %q: %w", api.ErrNotFound, name, err))
		}
		objs = append(objs, o)
		sh := o.Info().Shape
		if sh.Bytes() != bytes || (shape != object.Shape{} && sh != shape) || sh != objs[0].Info().Shape {
			return fail(malformed("stored object %q is %s, not what the query reads", name, sh))
		}
	}
	return objs, nil
}

func (s *source) release() {
	s.ahead.stop()
	for _, o := range append(s.tiles, s.diags...) {
		o.Release()
	}
	s.tiles, s.diags = nil, nil
}

// Blocks: a tile is read limb by limb (tileShape: limbs of whole rows).
func (s *source) Blocks() int { return s.tiles[0].Info().Shape.NumLimbs() }

// VisitBlock reads limb b of tile k page by page and scans each verified
// page where it was read (a page holds whole rows: pageRows); otherwise it
// reads the limb into a buffer first.
func (s *source) VisitBlock(_ context.Context, k, b int, f func(row int, rows []byte)) error {
	return s.visitBlock(k, b, true, f)
}

// visitBlock is VisitBlock, its pages scanned on a goroutine per channel
// or (parallel false) all on the caller's. A page is scanned where it was
// read only if it holds whole blocks of matvec.RowBlock rows: the vector
// kernels take rows in those blocks and leave the rest to a Go loop that
// rebuilds the query's words on every call: the 2-row pages of a store of
// 4 KiB pages (the device's default), scanned page by page, made a 16 MiB
// database's query 0.49 s against 0.06 s with the limb read whole.
func (s *source) visitBlock(k, b int, parallel bool, f func(row int, rows []byte)) error {
	o := s.tiles[k]
	lb := o.Info().Shape.LimbBytes()
	if b == 0 {
		// The tiles' pages are read in place through the store's
		// mappings: where they are not cached, a prefetcher reads them
		// ahead of the scan (prefetch.go).
		s.ahead.started(k)
	}
	if s.rowBytes > 0 && s.pageBytes%(matvec.RowBlock*s.rowBytes) == 0 {
		scan := o.ScanLimb
		if !parallel {
			scan = o.ScanLimbSerial
		}
		if err := scan(0, b, func(off int, page []byte) { f(off/s.rowBytes, page) }); err != nil {
			return err
		}
	} else {
		bp := limbBuffer(lb)
		defer limbBuffers.Put(bp)
		if err := o.ReadLimbInto(*bp, 0, b); err != nil {
			return err
		}
		f(0, *bp)
	}
	s.bytes.Add(int64(lb))
	return nil
}

// limbBuffers holds limb-sized buffers of scans that read a limb whole
// (a fresh MiB per limb costs page faults on every query).
var limbBuffers sync.Pool

// limbBuffer returns a buffer of n bytes from limbBuffers.
func limbBuffer(n int) *[]byte {
	if bp, ok := limbBuffers.Get().(*[]byte); ok && cap(*bp) >= n {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]byte, n)
	return &b
}

// ReadDiagonal reads diagonal i: poly i mod b1 of object i / b1. On a
// little-endian machine the stored words are read straight into dst.
func (s *source) ReadDiagonal(_ context.Context, i int, dst []uint64) error {
	o := s.diags[i/s.b1]
	for l := 0; l*s.slots < len(dst); l++ {
		limb := dst[l*s.slots : (l+1)*s.slots]
		if littleEndian {
			if err := o.ReadLimbInto(unsafe.Slice((*byte)(unsafe.Pointer(&limb[0])), 8*len(limb)), i%s.b1, l); err != nil {
				return err
			}
		} else {
			s.bufMu.Lock()
			if len(s.buf) != 8*s.slots {
				s.buf = make([]byte, 8*s.slots)
			}
			err := o.ReadLimbInto(s.buf, i%s.b1, l)
			for j := range limb {
				limb[j] = binary.LittleEndian.Uint64(s.buf[8*j:])
			}
			s.bufMu.Unlock()
			if err != nil {
				return err
			}
		}
		s.bytes.Add(int64(8 * len(limb)))
	}
	return nil
}

// passTiles are the tiles a scan pass reads, as the chunks of run: while
// another caller shares the cores, a block's pages are scanned on the
// worker that holds the core only.
type passTiles struct {
	*source
	run *admit.Run
}

func (p passTiles) VisitBlock(_ context.Context, k, b int, f func(row int, rows []byte)) error {
	return p.visitBlock(k, b, !p.run.Shared(), f)
}
