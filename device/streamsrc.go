package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler"
	"github.com/rosemary-fhe/rosemary/engine"
	"github.com/rosemary-fhe/rosemary/store"
)

// StoredBinding binds a Stored node of a segment to store objects:
// instance k sits at position p = TilePosition(k, count, RowLength,
// TileRows), poly p mod PerObject of the object named
// StoredObjectName(Prefix, p / PerObject).
type StoredBinding struct {
	Node      int // IR node
	Prefix    string
	PerObject int64
	// RowLength and TileRows (0: none) tile the instances: read as rows of
	// RowLength, each TileRows rows are stored column by column, the order
	// in which a multiply-accumulate loop of TileRows lanes reads them.
	RowLength, TileRows int64
}

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

// KeyBinding binds an evaluation key of a segment ("rlk", "gal:<g>") to a
// stored key object.
type KeyBinding struct {
	Key    string
	Object string
}

// streamSource serves one run of a stream program from a request and the
// store: inputs inline, stored instances read from pinned objects ahead of
// the workers, keys from stored key objects (kept by the device's cache).
type streamSource struct {
	d      *Device
	sp     *compiler.StreamProgram
	inputs map[int][]engine.Limbs // stream node → instances
	stored map[int]*pinnedSet     // stream node → its objects
	keys   map[string]string      // key name → object
	moduli []uint64               // Q then P

	mu         sync.Mutex
	storeBytes int64
	readahead  int
}

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

// pinnedSet is a stored node's objects, pinned for the whole run so a
// query reads one generation of each even if it is replaced meanwhile.
type pinnedSet struct {
	objs      []*store.Object
	perObject int64
	count     int64
	limbs     int // limbs per instance (1 for a compact plaintext)
	wordSize  int
	logN      int
	compact   bool
	rowLength int64
	tileRows  int64
}

func (p *pinnedSet) release() {
	for _, o := range p.objs {
		o.Release()
	}
}

// pin acquires every object of a stored binding and checks its shape
// against the node.
func (d *Device) pin(sn compiler.StreamNode, b StoredBinding, logN int) (*pinnedSet, error) {
	if b.PerObject < 1 || b.PerObject > 255 {
		return nil, fmt.Errorf("%w: stored %q: %d instances per object", ErrInvalid, sn.Name, b.PerObject)
	}
	n := (sn.Count + b.PerObject - 1) / b.PerObject
	if b.RowLength < 0 || b.TileRows < 0 || b.TileRows > 1<<16 || (b.RowLength > 1 && sn.Count%b.RowLength != 0) {
		return nil, fmt.Errorf("%w: stored %q: tiles of %d rows of %d for %d instances", ErrInvalid, sn.Name, b.TileRows, b.RowLength, sn.Count)
	}
	ps := &pinnedSet{perObject: b.PerObject, count: sn.Count, limbs: sn.Limbs, logN: logN, compact: sn.Compact,
		rowLength: b.RowLength, tileRows: b.TileRows}
	for j := int64(0); j < n; j++ {
		name := StoredObjectName(b.Prefix, j)
		o, err := d.st.Acquire(name)
		if err != nil {
			ps.release()
			return nil, fmt.Errorf("%w: stored %q: object %q: %w", ErrNotFound, sn.Name, name, err)
		}
		ps.objs = append(ps.objs, o)
		sh := o.Info().Shape
		want := min(b.PerObject, sn.Count-j*b.PerObject)
		switch {
		case int(sh.LogN) != logN:
			err = fmt.Errorf("N=2^%d, the program's ring has 2^%d", sh.LogN, logN)
		case int64(sh.Polys) < want:
			err = fmt.Errorf("%d instances, the binding needs %d", sh.Polys, want)
		case sh.Limbs < sn.Limbs:
			err = fmt.Errorf("%d limbs per instance, the node reads %d", sh.Limbs, sn.Limbs)
		case sn.Compact && sh.WordSize != 2 && sh.WordSize != 8:
			err = fmt.Errorf("compact plaintexts of %d-byte words (2 or 8)", sh.WordSize)
		case !sn.Compact && sh.WordSize != 8:
			err = fmt.Errorf("%d-byte words, want 8", sh.WordSize)
		case ps.wordSize != 0 && int(sh.WordSize) != ps.wordSize:
			err = fmt.Errorf("%d-byte words, object 0 has %d", sh.WordSize, ps.wordSize)
		}
		if err != nil {
			ps.release()
			return nil, fmt.Errorf("%w: stored %q: object %q: %w", ErrInvalid, sn.Name, name, err)
		}
		ps.wordSize = int(sh.WordSize)
		if sh.Limbs != sn.Limbs && ps.wordSize == 2 {
			ps.release()
			return nil, fmt.Errorf("%w: stored %q: compact objects hold one limb", ErrInvalid, sn.Name)
		}
	}
	return ps, nil
}

// Input implements engine.StreamSource.
func (s *streamSource) Input(i int, k int64) (engine.Limbs, error) {
	v, ok := s.inputs[i]
	if !ok || k >= int64(len(v)) {
		return nil, fmt.Errorf("%w: input %q instance %d not sent", ErrInvalid, s.sp.Nodes[i].Name, k)
	}
	return v[k], nil
}

// Key implements engine.StreamSource.
func (s *streamSource) Key(name string) (engine.Limbs, error) {
	obj, ok := s.keys[name]
	if !ok {
		return nil, fmt.Errorf("%w: key %s not bound", ErrNotFound, name)
	}
	return s.d.streamKey(obj, s.moduli)
}

// Stored implements engine.StreamSource.
func (s *streamSource) Stored(ctx context.Context, i int) (engine.StoredReader, error) {
	ps, ok := s.stored[i]
	if !ok {
		return nil, fmt.Errorf("%w: stored %q not bound", ErrInvalid, s.sp.Nodes[i].Name)
	}
	return newAheadReader(ctx, s, ps, s.readahead), nil
}

func (s *streamSource) countRead(b int64) {
	s.mu.Lock()
	s.storeBytes += b
	s.mu.Unlock()
}

// aheadReader reads a worker's stored instances: whole objects (one
// positional read per channel), fetched ahead of the worker by a goroutine
// into a few buffers, and decoded instance by instance into one limb set.
type aheadReader struct {
	src   *streamSource
	ps    *pinnedSet
	ctx   context.Context
	depth int

	cur    int64    // object in buf, −1 if none
	buf    [][]byte // its limbs
	dec    engine.Limbs
	next   int64 // object the fetcher delivers next, −1 if none runs
	ch     chan fetched
	cancel context.CancelFunc
	free   chan [][]byte
}

type fetched struct {
	obj int64
	raw [][]byte
	err error
}

func newAheadReader(ctx context.Context, src *streamSource, ps *pinnedSet, depth int) *aheadReader {
	r := &aheadReader{src: src, ps: ps, ctx: ctx, depth: max(depth, 1), cur: -1, next: -1, free: make(chan [][]byte, max(depth, 1)+2)}
	n := 1 << ps.logN
	r.dec = make(engine.Limbs, ps.limbs)
	for i := range r.dec {
		r.dec[i] = make([]uint64, n)
	}
	return r
}

// start runs a fetcher from object first on.
func (r *aheadReader) start(first int64) {
	r.stop()
	ctx, cancel := context.WithCancel(r.ctx)
	r.cancel, r.next = cancel, first
	ch := make(chan fetched, r.depth)
	r.ch = ch
	go func() {
		defer close(ch)
		for j := first; j < int64(len(r.ps.objs)); j++ {
			raw := r.buffer(j)
			err := r.ps.objs[j].ReadAllInto(raw)
			if err == nil {
				r.src.countRead(int64(len(raw)) * int64(len(raw[0])))
			}
			select {
			case ch <- fetched{obj: j, raw: raw, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
}

func (r *aheadReader) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	for f := range r.ch { // drain: the fetcher exits
		r.recycle(f.raw)
	}
	r.cancel, r.ch, r.next = nil, nil, -1
}

func (r *aheadReader) buffer(j int64) [][]byte {
	sh := r.ps.objs[j].Info().Shape
	select {
	case b := <-r.free:
		if len(b) == sh.NumLimbs() && len(b[0]) == sh.LimbBytes() {
			return b
		}
	default:
	}
	b := make([][]byte, sh.NumLimbs())
	for i := range b {
		b[i] = make([]byte, sh.LimbBytes())
	}
	return b
}

func (r *aheadReader) recycle(b [][]byte) {
	if b == nil {
		return
	}
	select {
	case r.free <- b:
	default:
	}
}

// Instance implements engine.StoredReader.
func (r *aheadReader) Instance(k int64) (engine.Limbs, error) {
	if k < 0 || k >= r.ps.count {
		return nil, fmt.Errorf("%w: instance %d of %d", ErrInvalid, k, r.ps.count)
	}
	pos := TilePosition(k, r.ps.count, r.ps.rowLength, r.ps.tileRows)
	j, poly := pos/r.ps.perObject, int(pos%r.ps.perObject)
	if j != r.cur {
		if r.ch == nil || j < r.next {
			r.start(j)
		}
		for {
			f, ok := <-r.ch
			if !ok {
				if err := r.ctx.Err(); err != nil {
					return nil, err
				}
				return nil, errors.New("device: stored reader stopped")
			}
			r.next = f.obj + 1
			if f.err != nil {
				r.stop()
				return nil, fmt.Errorf("device: read %s: %w", r.ps.objs[f.obj].Info().Name, f.err)
			}
			if f.obj == j {
				r.recycle(r.buf)
				r.buf, r.cur = f.raw, j
				break
			}
			r.recycle(f.raw)
		}
	}
	per := len(r.buf) / r.ps.objs[j].Info().Shape.Polys
	for l := range r.dec {
		raw := r.buf[poly*per+l]
		dst := r.dec[l]
		switch r.ps.wordSize {
		case 2:
			decode16(raw, dst)
		default:
			// Full-width words are residues mod q_l (mod t if compact):
			// a value out of range is a corrupt object, not an operand.
			bound := r.src.moduli[l]
			if r.ps.limbs == 1 && r.src.sp.T != 0 && r.ps.compact {
				bound = r.src.sp.T
			}
			for i := range dst {
				v := binary.LittleEndian.Uint64(raw[8*i:])
				if v >= bound {
					return nil, fmt.Errorf("device: %w: %s poly %d limb %d coefficient %d is %d, not below %d",
						store.ErrCorrupt, r.ps.objs[j].Info().Name, poly, l, i, v, bound)
				}
				dst[i] = v
			}
		}
	}
	return r.dec, nil
}

// Close implements engine.StoredReader.
func (r *aheadReader) Close() error {
	r.stop()
	return nil
}
