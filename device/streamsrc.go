package device

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/lower"
	"github.com/rosemary-fhe/rosemary/device/admit"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
)

// streamSource serves one run of a stream program from a request and the
// store: inputs inline, stored instances read from pinned objects ahead of
// the workers, keys from stored key objects (kept by the device's cache).
type streamSource struct {
	d      *Device
	caller string // whose key table the run reads (quotaCaller)
	sp     *lower.StreamProgram
	inputs map[int][]engine.Limbs // stream node → instances
	stored map[int]*pinnedSet     // stream node → its objects
	keys   map[string]string      // key name → object
	moduli []uint64               // Q then P

	mu         sync.Mutex
	storeBytes int64
	cache      *objectCache
}

// pinnedSet is a stored node's objects, pinned for the whole run so a
// query reads one generation of each even if it is replaced meanwhile.
type pinnedSet struct {
	objs      []*store.Object
	perObject int64
	count     int64
	polys     int // polys per instance (2 for a stored ciphertext), consecutive in an object
	limbs     int // limbs per poly (1 for a compact plaintext)
	wordSize  int
	logN      int
	compact   bool
	rowLength int64
	tileRows  int64
	stride    int64
	offset    int64
}

// position is where instance k is stored.
func (p *pinnedSet) position(k int64) int64 {
	if p.stride > 0 {
		return p.offset + k*p.stride
	}
	return api.TilePosition(k, p.count, p.rowLength, p.tileRows)
}

func (p *pinnedSet) release() {
	for _, o := range p.objs {
		o.Release()
	}
}

// pin acquires every object of a stored binding and checks its shape
// against the node.
func (d *Device) pin(sn lower.StreamNode, m *devicepb.StoredBinding, logN int) (*pinnedSet, error) {
	b := struct {
		Prefix                                         string
		PerObject, RowLength, TileRows, Stride, Offset int64
	}{m.GetPrefix(), int64(m.GetPerObject()), int64(m.GetRowLength()), int64(m.GetTileRows()), int64(m.GetStride()), int64(m.GetOffset())}
	if b.PerObject < 1 || b.PerObject > 255 {
		return nil, fmt.Errorf("%w: stored %q: %d instances per object", api.ErrInvalid, sn.Name, b.PerObject)
	}
	if b.RowLength < 0 || b.TileRows < 0 || b.TileRows > 1<<16 || (b.RowLength > 1 && sn.Count%b.RowLength != 0) {
		return nil, fmt.Errorf("%w: stored %q: tiles of %d rows of %d for %d instances", api.ErrInvalid, sn.Name, b.TileRows, b.RowLength, sn.Count)
	}
	if b.Stride < 0 || b.Offset < 0 || (b.Stride > 0 && b.Offset >= b.Stride) || b.Stride > 1<<20 {
		return nil, fmt.Errorf("%w: stored %q: stride %d, offset %d", api.ErrInvalid, sn.Name, b.Stride, b.Offset)
	}
	if sn.Polys < 1 || sn.Polys > 2 || (sn.Compact && sn.Polys != 1) {
		return nil, fmt.Errorf("%w: stored %q: %d polys per instance", api.ErrInvalid, sn.Name, sn.Polys)
	}
	ps := &pinnedSet{perObject: b.PerObject, count: sn.Count, polys: sn.Polys, limbs: sn.Limbs, logN: logN, compact: sn.Compact,
		rowLength: b.RowLength, tileRows: b.TileRows, stride: b.Stride, offset: b.Offset}
	positions := sn.Count
	if b.Stride > 0 {
		positions = b.Offset + (sn.Count-1)*b.Stride + 1
	}
	n := (positions + b.PerObject - 1) / b.PerObject
	for j := int64(0); j < n; j++ {
		name := api.StoredObjectName(b.Prefix, j)
		o, err := d.st.Acquire(name)
		if err != nil {
			ps.release()
			return nil, fmt.Errorf("%w: stored %q: object %q: %w", api.ErrNotFound, sn.Name, name, err)
		}
		ps.objs = append(ps.objs, o)
		sh := o.Info().Shape
		want := min(b.PerObject, positions-j*b.PerObject)
		switch {
		case int(sh.LogN) != logN:
			err = fmt.Errorf("N=2^%d, the program's ring has 2^%d", sh.LogN, logN)
		case int64(sh.Polys) < want*int64(sn.Polys):
			err = fmt.Errorf("%d polys, the binding needs %d instances of %d", sh.Polys, want, sn.Polys)
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
			return nil, fmt.Errorf("%w: stored %q: object %q: %w", api.ErrInvalid, sn.Name, name, err)
		}
		ps.wordSize = int(sh.WordSize)
		if sh.Limbs != sn.Limbs && ps.wordSize == 2 {
			ps.release()
			return nil, fmt.Errorf("%w: stored %q: compact objects hold one limb", api.ErrInvalid, sn.Name)
		}
	}
	return ps, nil
}

// Input implements engine.StreamSource.
func (s *streamSource) Input(i int, k int64) (engine.Limbs, error) {
	v, ok := s.inputs[i]
	if !ok || k >= int64(len(v)) {
		return nil, fmt.Errorf("%w: input %q instance %d not sent", api.ErrInvalid, s.sp.Nodes[i].Name, k)
	}
	return v[k], nil
}

// Key implements engine.StreamSource.
func (s *streamSource) Key(name string) (engine.Limbs, error) {
	obj, ok := s.keys[name]
	if !ok {
		return nil, fmt.Errorf("%w: key %s not bound", api.ErrNotFound, name)
	}
	return s.d.streamKey(s.caller, obj, s.moduli)
}

// Stored implements engine.StreamSource.
func (s *streamSource) Stored(ctx context.Context, i int) (engine.StoredReader, error) {
	ps, ok := s.stored[i]
	if !ok {
		return nil, fmt.Errorf("%w: stored %q not bound", api.ErrInvalid, s.sp.Nodes[i].Name)
	}
	return newAheadReader(s, ps, s.cache), nil
}

func (s *streamSource) countRead(b int64) {
	s.mu.Lock()
	s.storeBytes += b
	s.mu.Unlock()
}

// objectCache holds the objects a run read last, shared by every reader
// of the run: whole objects (one positional read per channel), fetched
// once each while in the cache, the next object of a reader fetched ahead
// on a goroutine. Several stored nodes interleaved over one sequence of
// objects (a stride binding) read each object once. Buffers are reused:
// an object leaves the cache only when no reader holds it.
type objectCache struct {
	ctx   context.Context
	count func(int64)
	max   int
	gate  *admit.Run // the run's claim on the cores: reads and decodes take one

	mu    sync.Mutex
	objs  map[objectKey]*cachedObject
	order []objectKey
	free  map[int64][][][]byte // buffers by object bytes
}

// objectKey names one generation of an object (readers pin their own
// handles on it).
type objectKey struct {
	name string
	gen  store.Generation
}

type cachedObject struct {
	done chan struct{}
	raw  [][]byte
	err  error
	refs int // readers holding it (under objectCache.mu)
}

func newObjectCache(ctx context.Context, max int, count func(int64), gate *admit.Run) *objectCache {
	return &objectCache{ctx: ctx, max: max, count: count, gate: gate, objs: map[objectKey]*cachedObject{}, free: map[int64][][][]byte{}}
}

// acquire returns an object's limbs, reading it unless cached or in
// flight; the caller holds it until release.
func (c *objectCache) acquire(o *store.Object) (*cachedObject, error) {
	e := c.fetch(o, true)
	select {
	case <-e.done:
	case <-c.ctx.Done():
		c.release(e)
		return nil, c.ctx.Err()
	}
	if e.err != nil {
		c.release(e)
		return nil, fmt.Errorf("device: read %s: %w", o.Info().Name, e.err)
	}
	return e, nil
}

// release lets go of an object acquire returned.
func (c *objectCache) release(e *cachedObject) {
	if e == nil {
		return
	}
	c.mu.Lock()
	e.refs--
	c.evict()
	c.mu.Unlock()
}

// fetch starts reading an object unless cached or in flight.
func (c *objectCache) fetch(o *store.Object, hold bool) *cachedObject {
	in := o.Info()
	key := objectKey{in.Name, in.Generation}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.objs[key]
	if !ok {
		e = &cachedObject{done: make(chan struct{})}
		c.objs[key] = e
		c.order = append(c.order, key)
		sh := in.Shape
		raw := c.buffer(sh)
		go func() {
			defer close(e.done)
			release, err := c.gate.Acquire(c.ctx)
			if err != nil {
				e.err = err
				return
			}
			defer release()
			read := o.ReadAllInto
			if c.gate.Shared() {
				read = o.ReadAllIntoSerial // one core per grant
			}
			if e.err = read(raw); e.err == nil {
				e.raw = raw
				c.count(sh.Bytes())
			}
		}()
	}
	if hold {
		e.refs++
	}
	c.evict()
	return e
}

// buffer returns limbs for an object of shape sh (under mu).
func (c *objectCache) buffer(sh store.Shape) [][]byte {
	if free := c.free[sh.Bytes()]; len(free) > 0 {
		b := free[len(free)-1]
		c.free[sh.Bytes()] = free[:len(free)-1]
		if len(b) == sh.NumLimbs() {
			return b
		}
	}
	raw := make([][]byte, sh.NumLimbs())
	flat := make([]byte, sh.Bytes())
	for i := range raw {
		raw[i] = flat[i*sh.LimbBytes() : (i+1)*sh.LimbBytes()]
	}
	return raw
}

// evict drops the oldest objects no reader holds while over capacity,
// keeping their buffers (under mu).
func (c *objectCache) evict() {
	for i := 0; len(c.order) > c.max && i < len(c.order); {
		key := c.order[i]
		e := c.objs[key]
		select {
		case <-e.done:
		default:
			i++ // still being read
			continue
		}
		if e.refs > 0 {
			i++
			continue
		}
		delete(c.objs, key)
		c.order = append(c.order[:i], c.order[i+1:]...)
		if e.raw != nil {
			n := int64(len(e.raw)) * int64(len(e.raw[0]))
			c.free[n] = append(c.free[n], e.raw)
		}
	}
}

// readAhead is how many objects past the current one a reader asks for.
const readAhead = 2

// aheadReader reads a worker's instances of one stored node through the
// run's object cache, asking for the next object ahead, and decodes
// instance by instance into one limb set.
type aheadReader struct {
	src   *streamSource
	ps    *pinnedSet
	cache *objectCache
	dec   engine.Limbs
	held  *cachedObject // the object the last instance came from
	heldJ int64
}

func newAheadReader(src *streamSource, ps *pinnedSet, cache *objectCache) *aheadReader {
	r := &aheadReader{src: src, ps: ps, cache: cache}
	n := 1 << ps.logN
	r.dec = make(engine.Limbs, ps.polys*ps.limbs)
	for i := range r.dec {
		r.dec[i] = make([]uint64, n)
	}
	return r
}

// Instance implements engine.StoredReader.
func (r *aheadReader) Instance(k int64) (engine.Limbs, error) {
	if k < 0 || k >= r.ps.count {
		return nil, fmt.Errorf("%w: instance %d of %d", api.ErrInvalid, k, r.ps.count)
	}
	pos := r.ps.position(k)
	j, slot := pos/r.ps.perObject, int(pos%r.ps.perObject)
	if j >= int64(len(r.ps.objs)) {
		return nil, fmt.Errorf("%w: instance %d at position %d beyond the %d objects bound", api.ErrInvalid, k, pos, len(r.ps.objs))
	}
	if r.held == nil || r.heldJ != j {
		r.cache.release(r.held)
		r.held = nil
		e, err := r.cache.acquire(r.ps.objs[j])
		if err != nil {
			return nil, err
		}
		r.held, r.heldJ = e, j
		for a := j + 1; a <= j+readAhead && a < int64(len(r.ps.objs)); a++ {
			r.cache.fetch(r.ps.objs[a], false)
		}
	}
	buf := r.held.raw
	sh := r.ps.objs[j].Info().Shape
	if (slot+1)*r.ps.polys > sh.Polys {
		return nil, fmt.Errorf("%w: position %d: object %s holds %d polys", api.ErrInvalid, pos, r.ps.objs[j].Info().Name, sh.Polys)
	}
	release, err := r.cache.gate.Acquire(r.cache.ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	per := sh.Limbs
	for l := range r.dec {
		poly, limb := slot*r.ps.polys+l/r.ps.limbs, l%r.ps.limbs
		raw := buf[poly*per+limb]
		dst := r.dec[l]
		switch r.ps.wordSize {
		case 2:
			decode16(raw, dst)
		default:
			// Full-width words are residues mod q_l (mod t if compact):
			// a value out of range is a corrupt object, not an operand.
			bound := r.src.moduli[limb]
			if r.ps.limbs == 1 && r.src.sp.T != 0 && r.ps.compact {
				bound = r.src.sp.T
			}
			for i := range dst {
				v := binary.LittleEndian.Uint64(raw[8*i:])
				if v >= bound {
					return nil, fmt.Errorf("device: %w: %s poly %d limb %d coefficient %d is %d, not below %d",
						store.ErrCorrupt, r.ps.objs[j].Info().Name, poly, limb, i, v, bound)
				}
				dst[i] = v
			}
		}
	}
	return r.dec, nil
}

// Close implements engine.StoredReader.
func (r *aheadReader) Close() error {
	r.cache.release(r.held)
	r.held = nil
	return nil
}
