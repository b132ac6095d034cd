package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
	bolt "go.etcd.io/bbolt"
)

// Shape is an object's geometry (polys × limbs × limb bytes).
type Shape = layout.Shape

// Generation numbers the published versions of objects (package object).
type Generation = object.Generation

// Kind says what an object holds (package object). The store does not
// interpret it.
type Kind = object.Kind

// Object kinds.
const (
	KindCiphertext = object.KindCiphertext
	KindPlaintext  = object.KindPlaintext
	KindKey        = object.KindKey
	KindBlob       = object.KindBlob
)

func kindOf(class uint8) (Kind, error) {
	switch k := Kind(class); k {
	case KindCiphertext, KindPlaintext, KindKey, KindBlob:
		return k, nil
	}
	return 0, fmt.Errorf("unknown object kind %d", class)
}

// MaxNameLen bounds object names (bytes of UTF-8).
const MaxNameLen = 255

// CatalogFile is the name of the bbolt catalog inside a store directory.
const CatalogFile = "catalog.db"

// Info describes the current generation of an object.
type Info struct {
	Name       string
	Kind       Kind
	Shape      Shape
	Generation Generation
	Descriptor layout.Descriptor
	Bytes      int64 // payload bytes (all limbs)
	Pages      int64 // pages on disk
}

// GCStats summarizes one garbage collection.
type GCStats struct {
	Reclaimed int   // generations whose rows were freed
	Pinned    int   // dead generations kept because readers pin them
	Rows      int64 // rows freed (on every channel)
}

// Store is an open object store. It is safe for concurrent use: writers
// of different objects write their pages at the same time and change the
// catalog one at a time (inflight.go), writers of one object go one at a
// time, reads run concurrently with everything.
type Store struct {
	dir   string
	lay   layout.Layout
	db    *bolt.DB
	files []*os.File

	life  sync.RWMutex // operations hold RLock; Close holds Lock
	wmu   sync.Mutex   // serializes catalog changes (plan, publish, delete, GC)
	puts  inflight     // guarded by wmu
	names nameLocks
	// written, if set (by tests), is called once a Put's pages are
	// written, before it publishes; an error fails the Put.
	written func(name string) error

	mu     sync.Mutex // guards the fields below
	closed bool
	cur    map[string]record
	// heads counts the current objects by the first "/"-separated segment
	// of their names (a device's database), so asking whether a database
	// holds anything is one lookup, not a scan of every object.
	heads map[string]int
	pins  map[Generation]int

	isp atomic.Bool

	// idleGC reclaims, once writes pause, the generations a Put or Delete
	// retired: their own commits leave them for later (see retire).
	idleGC    *time.Timer
	idleDelay time.Duration // idleGCDelay; tests change it (under wmu)
	// commits counts catalog commits (each an fsync of the catalog).
	commits atomic.Int64
	// rangeFlushes counts the chunks large writes flushed (writeFlushed).
	rangeFlushes atomic.Int64

	maps mapTable // scans' mappings of the channel files (mapped.go)
}

// DefaultLayout is the layout Open gives a new store when asked for the
// zero Layout: 4 channels of 4 KiB pages.
var DefaultLayout = layout.Layout{Channels: 4, PageSize: 4096}

// Open opens or creates the store in dir with layout l. An existing store
// must have been created with the same layout; the zero Layout opens an
// existing store with its own and creates a new one with DefaultLayout.
// Open verifies the catalog (every record decodes; used and free extents
// tile the allocated rows) and reclaims dead generations left by a
// previous process.
func Open(dir string, l layout.Layout) (*Store, error) {
	adopt := l == layout.Layout{}
	if adopt {
		l = DefaultLayout
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	db, err := bolt.Open(filepath.Join(dir, CatalogFile), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open catalog in %s: %w", dir, err)
	}
	s := &Store{dir: dir, lay: l, db: db, pins: map[Generation]int{}, idleDelay: idleGCDelay}
	var st *catalogState
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketObjects, bucketDead, bucketFree} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if raw := meta.Get(keyLayout); raw == nil {
			enc, err := l.MarshalBinary()
			if err != nil {
				return err
			}
			if err := meta.Put(keyLayout, enc); err != nil {
				return err
			}
			if err := meta.Put(keyHWM, binary.LittleEndian.AppendUint32(nil, 0)); err != nil {
				return err
			}
			if err := meta.Put(keyGen, binary.LittleEndian.AppendUint64(nil, 0)); err != nil {
				return err
			}
		} else {
			var have layout.Layout
			if err := have.UnmarshalBinary(raw); err != nil {
				return fmt.Errorf("catalog layout: %w", err)
			}
			if adopt {
				l, s.lay = have, have
			}
			if have != l {
				return fmt.Errorf("store holds layout %v, opened with %v", have, l)
			}
		}
		var err error
		st, err = loadCatalog(tx, l)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	files, created, err := openChannelFiles(dir, l.Channels)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.files = files
	if created {
		if err := syncDir(dir); err != nil {
			s.closeFiles()
			return nil, err
		}
	}
	s.cur = st.objects
	s.heads = map[string]int{}
	for name := range s.cur {
		s.heads[headOf(name)]++
	}
	s.puts.lastGen = st.gen
	if _, err := s.GC(); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	return s, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: sync directory %s: %w", dir, err)
	}
	return nil
}

func (s *Store) closeFiles() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

// Close waits for running operations and closes the store. Handles from
// Acquire fail with ErrClosed afterwards.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// A collection still waiting for writes to pause runs now: the store
	// closes with no generation its writes retired left behind.
	var gcErr error
	s.wmu.Lock()
	if s.idleGC != nil && s.idleGC.Stop() {
		_, gcErr = s.gcLocked()
	}
	s.wmu.Unlock()
	s.unmapAll()
	if err := errors.Join(gcErr, s.closeFiles()); err != nil {
		return fmt.Errorf("store: close %s: %w", s.dir, err)
	}
	return nil
}

// begin marks the start of an operation; it fails once the store is closed.
func (s *Store) begin() error {
	s.life.RLock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) end() { s.life.RUnlock() }

// Layout returns the store's layout.
func (s *Store) Layout() layout.Layout { return s.lay }

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// SetISP switches ISP mode: while on, Put and Delete fail with ErrISPMode.
func (s *Store) SetISP(on bool) { s.isp.Store(on) }

// ISP reports whether ISP mode is on.
func (s *Store) ISP() bool { return s.isp.Load() }

func validName(name string) error {
	if name == "" || len(name) > MaxNameLen || !utf8.ValidString(name) {
		return fmt.Errorf("store: invalid object name %q: want 1..%d bytes of UTF-8", name, MaxNameLen)
	}
	return nil
}

// Put stores a new generation of the named object: limbs are its Polys ×
// Limbs limbs in poly-major order (limbs[poly*Limbs+limb]), each exactly
// shape.LimbBytes() long. When Put returns nil the generation is durable and
// visible; the previous generation (if any) becomes reclaimable.
func (s *Store) Put(name string, kind Kind, shape Shape, limbs [][]byte) (Generation, error) {
	return s.put(name, nil, kind, shape, limbs)
}

// PutIf is Put if the object's current generation is want (0: the object
// does not exist), else it fails with ErrStale: a compare-and-swap, no
// other writer of the object in between.
func (s *Store) PutIf(name string, want Generation, kind Kind, shape Shape, limbs [][]byte) (Generation, error) {
	return s.put(name, &want, kind, shape, limbs)
}

func (s *Store) put(name string, want *Generation, kind Kind, shape Shape, limbs [][]byte) (Generation, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	if s.isp.Load() {
		return 0, fmt.Errorf("store: put %q: %w", name, ErrISPMode)
	}
	if err := validName(name); err != nil {
		return 0, err
	}
	if _, err := kindOf(uint8(kind)); err != nil {
		return 0, fmt.Errorf("store: put %q: %w", name, err)
	}
	if err := shape.Validate(); err != nil {
		return 0, fmt.Errorf("store: put %q: %w", name, err)
	}
	if len(limbs) != shape.NumLimbs() {
		return 0, fmt.Errorf("store: put %q: %d limbs given, shape %s has %d", name, len(limbs), shape, shape.NumLimbs())
	}
	for i, b := range limbs {
		if len(b) != shape.LimbBytes() {
			return 0, fmt.Errorf("store: put %q: limb %d (poly %d, limb %d) is %d bytes, want %d",
				name, i, i/shape.Limbs, i%shape.Limbs, len(b), shape.LimbBytes())
		}
	}

	unlock := s.names.lock(name)
	defer unlock()
	if want != nil {
		if err := s.checkGeneration(name, *want); err != nil {
			return 0, fmt.Errorf("store: put %q: %w", name, err)
		}
	}
	gen, desc, reserved, err := s.plan(shape, kind)
	if err != nil {
		return 0, fmt.Errorf("store: put %q: %w", name, err)
	}
	// Write and fsync every page before the descriptor is published; other
	// writers plan, write and publish meanwhile.
	err = s.writeObject(desc, gen, limbs)
	if err == nil && s.written != nil {
		err = s.written(name)
	}
	if err != nil {
		s.abandon(reserved)
		return 0, fmt.Errorf("store: put %q: %w", name, err)
	}
	rec := record{gen: gen, desc: desc}
	enc, err := encodeRecord(rec)
	if err != nil {
		s.abandon(reserved)
		return 0, fmt.Errorf("store: put %q: %w", name, err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.puts.release(reserved...)
	// Publish atomically.
	var retired Generation
	err = s.update(func(tx *bolt.Tx) error {
		// Take the lower extent first so that two above hwm extend it in order.
		for _, e := range reserved {
			if err := freeGap(tx, e.Start); err != nil {
				return fmt.Errorf("catalog: %w", err)
			}
			if err := takeRows(tx, e.Start, e.Rows); err != nil {
				return fmt.Errorf("catalog: %w", err)
			}
		}
		objs := tx.Bucket(bucketObjects)
		retired = 0
		if old := objs.Get([]byte(name)); old != nil {
			oldRec, err := decodeRecord(old)
			if err != nil {
				return fmt.Errorf("catalog: previous generation: %w", err)
			}
			if err := tx.Bucket(bucketDead).Put(genKey(oldRec.gen), old); err != nil {
				return err
			}
			retired = oldRec.gen
		}
		if err := objs.Put([]byte(name), enc); err != nil {
			return err
		}
		if _, err := s.collect(tx, retired); err != nil {
			return err
		}
		// Generations are numbered when planned and published as their
		// writes end: the last published is the highest.
		last, err := decodeUint64("gen", tx.Bucket(bucketMeta).Get(keyGen))
		if err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyGen, binary.LittleEndian.AppendUint64(nil, max(last, uint64(gen))))
	})
	if err != nil {
		return 0, fmt.Errorf("store: put %q: publish: %w", name, err)
	}
	s.mu.Lock()
	if _, ok := s.cur[name]; !ok {
		s.heads[headOf(name)]++
	}
	s.cur[name] = rec
	s.mu.Unlock()
	if retired != 0 {
		s.retire()
	}
	return gen, nil
}

// checkGeneration fails with ErrStale unless name's current generation is
// want (0: no such object); the caller holds name's writer lock.
func (s *Store) checkGeneration(name string, want Generation) error {
	s.mu.Lock()
	cur := s.cur[name].gen // 0 if absent
	s.mu.Unlock()
	if cur != want {
		return fmt.Errorf("%w: generation %d, not %d", ErrStale, cur, want)
	}
	return nil
}

// plan numbers a new generation of shape and reserves its rows (the
// lower extent first): from the committed catalog, less what other Puts
// still writing reserved.
func (s *Store) plan(shape Shape, kind Kind) (Generation, layout.Descriptor, []layout.Extent, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var base [2]uint32
	rows := s.lay.PartRows(shape)
	err := s.db.View(func(tx *bolt.Tx) error {
		hwm, err := decodeUint32("hwm", tx.Bucket(bucketMeta).Get(keyHWM))
		if err != nil {
			return err
		}
		var free []layout.Extent
		err = tx.Bucket(bucketFree).ForEach(func(k, v []byte) error {
			e, err := decodeExtent(k, v)
			free = append(free, e)
			return err
		})
		if err != nil {
			return err
		}
		a := s.puts.allocator(free, hwm)
		for p, r := range rows {
			if r == 0 {
				continue
			}
			if base[p], err = a.alloc(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, layout.Descriptor{}, nil, fmt.Errorf("allocate: %w", err)
	}
	desc, err := s.lay.NewDescriptor(shape, base, uint8(kind))
	if err != nil {
		return 0, layout.Descriptor{}, nil, err
	}
	var reserved []layout.Extent
	for p, r := range rows {
		if r > 0 {
			reserved = append(reserved, layout.Extent{Start: base[p], Rows: uint32(r)})
		}
	}
	slices.SortFunc(reserved, func(a, b layout.Extent) int { return cmp.Compare(a.Start, b.Start) })
	s.puts.lastGen++
	s.puts.reserve(reserved...)
	return s.puts.lastGen, desc, reserved, nil
}

// abandon gives back the rows of a Put that will not publish.
func (s *Store) abandon(reserved []layout.Extent) {
	s.wmu.Lock()
	s.puts.release(reserved...)
	s.wmu.Unlock()
}

// Delete removes the named object; its generation becomes reclaimable.
func (s *Store) Delete(name string) error { return s.delete(name, nil) }

// DeleteIf is Delete if the object's current generation is gen, else it
// fails with ErrStale (ErrNotFound if there is no such object).
func (s *Store) DeleteIf(name string, gen Generation) error {
	if gen == 0 {
		return fmt.Errorf("store: delete %q: %w: generation 0", name, ErrNotFound)
	}
	return s.delete(name, &gen)
}

func (s *Store) delete(name string, want *Generation) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if s.isp.Load() {
		return fmt.Errorf("store: delete %q: %w", name, ErrISPMode)
	}
	unlock := s.names.lock(name)
	defer unlock()
	if want != nil {
		s.mu.Lock()
		cur, ok := s.cur[name]
		s.mu.Unlock()
		if ok && cur.gen != *want {
			return fmt.Errorf("store: delete %q: %w: generation %d, not %d", name, ErrStale, cur.gen, *want)
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		objs := tx.Bucket(bucketObjects)
		old := objs.Get([]byte(name))
		if old == nil {
			return ErrNotFound
		}
		r, err := decodeRecord(old)
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		if err := tx.Bucket(bucketDead).Put(genKey(r.gen), old); err != nil {
			return err
		}
		if err := objs.Delete([]byte(name)); err != nil {
			return err
		}
		_, err = s.collect(tx, r.gen)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete %q: %w", name, err)
	}
	s.mu.Lock()
	if _, ok := s.cur[name]; ok {
		delete(s.cur, name)
		h := headOf(name)
		if s.heads[h]--; s.heads[h] <= 0 {
			delete(s.heads, h)
		}
	}
	s.mu.Unlock()
	s.retire()
	return nil
}

// update commits fn's changes to the catalog.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	s.commits.Add(1)
	return s.db.Update(fn)
}

// idleGCDelay is how long writes must pause before the generations they
// retired are reclaimed by a commit of their own.
const idleGCDelay = 200 * time.Millisecond

// retire follows a commit that made a generation dead. That commit
// reclaimed the generations retired before it but not its own: until
// s.cur names the new generation, a reader may still pin the old one, so
// it is reclaimed by the next write's commit or, if writes pause, by a
// collection idleGCDelay after the last of them. A write thus costs one
// catalog commit (one fsync), not one to publish and one to collect. The
// caller holds wmu.
func (s *Store) retire() {
	if s.idleGC == nil {
		s.idleGC = time.AfterFunc(s.idleDelay, s.collectIdle)
		return
	}
	s.idleGC.Reset(s.idleDelay)
}

// collectIdle is the idle collection; a closed store has nothing to do.
func (s *Store) collectIdle() {
	if _, err := s.GC(); err != nil && !errors.Is(err, ErrClosed) {
		// The next write's commit or Open collects what this one could not.
		return
	}
}

// GC reclaims the rows of every dead generation no reader pins.
func (s *Store) GC() (GCStats, error) {
	if err := s.begin(); err != nil {
		return GCStats{}, err
	}
	defer s.end()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.gcLocked()
}

// gcLocked runs garbage collection; the caller holds wmu. With nothing to
// reclaim it commits nothing (a commit is an fsync).
func (s *Store) gcLocked() (GCStats, error) {
	var st GCStats
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		st, err = s.victims(tx, 0, nil)
		return err
	})
	if err == nil && st.Reclaimed > 0 {
		err = s.update(func(tx *bolt.Tx) error {
			var err error
			st, err = s.collect(tx, 0)
			return err
		})
	}
	if err != nil {
		return GCStats{}, fmt.Errorf("store: gc: %w", err)
	}
	return st, nil
}

// victims counts the dead generations of tx that no reader pins, except
// keep (0: none), and hands each to f if f is not nil.
func (s *Store) victims(tx *bolt.Tx, keep Generation, f func(record)) (GCStats, error) {
	var st GCStats
	s.mu.Lock()
	defer s.mu.Unlock()
	err := tx.Bucket(bucketDead).ForEach(func(k, v []byte) error {
		r, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("dead generation % x: %w", k, err)
		}
		if s.pins[r.gen] > 0 || r.gen == keep {
			st.Pinned++
			return nil
		}
		st.Reclaimed++
		if f != nil {
			f(r)
		}
		return nil
	})
	return st, err
}

// collect frees, in tx, the rows of every dead generation no reader pins,
// except keep (0: none).
func (s *Store) collect(tx *bolt.Tx, keep Generation) (GCStats, error) {
	var list []record
	st, err := s.victims(tx, keep, func(r record) { list = append(list, r) })
	if err != nil {
		return GCStats{}, err
	}
	dead := tx.Bucket(bucketDead)
	for _, r := range list {
		ext, err := s.lay.Extents(r.desc)
		if err != nil {
			return GCStats{}, err
		}
		for _, e := range ext {
			if err := releaseRows(tx, e); err != nil {
				return GCStats{}, fmt.Errorf("generation %d: %w", r.gen, err)
			}
			st.Rows += int64(e.Rows)
		}
		if err := dead.Delete(genKey(r.gen)); err != nil {
			return GCStats{}, err
		}
	}
	return st, nil
}

func infoOf(l layout.Layout, name string, r record) Info {
	k, _ := kindOf(r.desc.Class) // validated when the record was decoded or built
	sh := r.desc.Shape()
	return Info{Name: name, Kind: k, Shape: sh, Generation: r.gen, Descriptor: r.desc,
		Bytes: sh.Bytes(), Pages: l.PagesPerObject(sh)}
}

// Stat describes the current generation of the named object.
func (s *Store) Stat(name string) (Info, error) {
	if err := s.begin(); err != nil {
		return Info{}, err
	}
	defer s.end()
	s.mu.Lock()
	r, ok := s.cur[name]
	s.mu.Unlock()
	if !ok {
		return Info{}, fmt.Errorf("store: stat %q: %w", name, ErrNotFound)
	}
	return infoOf(s.lay, name, r), nil
}

// headOf is the first "/"-separated segment of an object name.
func headOf(name string) string {
	head, _, _ := strings.Cut(name, "/")
	return head
}

// HoldsHead reports whether any current object's name is head or starts
// with head + "/": one lookup in an index, whatever the store holds.
func (s *Store) HoldsHead(head string) (bool, error) {
	if err := s.begin(); err != nil {
		return false, err
	}
	defer s.end()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heads[head] > 0, nil
}

// List describes every object, sorted by name.
func (s *Store) List() ([]Info, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	s.mu.Lock()
	out := make([]Info, 0, len(s.cur))
	for name, r := range s.cur {
		out = append(out, infoOf(s.lay, name, r))
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Object is a pinned generation of an object: its pages are not reclaimed
// until Release, even if the object is replaced or deleted meanwhile.
type Object struct {
	s        *Store
	name     string
	rec      record
	released atomic.Bool
	// cached: a scan found the first page of one of the object's limbs
	// in the page cache, and later scans through this handle take the
	// rest as cached too instead of asking again (a system call a limb
	// was 2% of a warm query's device CPU; a page evicted since is
	// faulted in through the mapping, only slower).
	cached atomic.Bool
}

// Acquire pins the current generation of the named object for reading.
func (s *Store) Acquire(name string) (*Object, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.cur[name]
	if !ok {
		return nil, fmt.Errorf("store: acquire %q: %w", name, ErrNotFound)
	}
	s.pins[r.gen]++
	return &Object{s: s, name: name, rec: r}, nil
}

// Info describes the pinned generation.
func (o *Object) Info() Info { return infoOf(o.s.lay, o.name, o.rec) }

// Release unpins the generation; its rows become reclaimable at the next
// garbage collection if it is no longer current. Release is idempotent.
func (o *Object) Release() {
	if o.released.Swap(true) {
		return
	}
	o.s.mu.Lock()
	if o.s.pins[o.rec.gen]--; o.s.pins[o.rec.gen] <= 0 {
		delete(o.s.pins, o.rec.gen)
	}
	o.s.mu.Unlock()
}

// ReadLimb reads one limb of the pinned generation.
func (o *Object) ReadLimb(poly, limb int) ([]byte, error) {
	dst := make([]byte, o.rec.desc.Shape().LimbBytes())
	if err := o.ReadLimbInto(dst, poly, limb); err != nil {
		return nil, err
	}
	return dst, nil
}

// ReadLimbInto reads one limb into dst, which must be exactly LimbBytes long.
func (o *Object) ReadLimbInto(dst []byte, poly, limb int) error {
	if o.released.Load() {
		return fmt.Errorf("store: read %q: %w", o.name, ErrReleased)
	}
	if err := o.s.begin(); err != nil {
		return err
	}
	defer o.s.end()
	return o.s.readLimb(o.name, o.rec, poly, limb, dst)
}

// VisitLimb reads one limb of the pinned generation page by page and
// hands each verified page to f with its offset in the limb; the bytes are
// the read buffer's, valid during the call only (no second copy: a scan
// computes on them while they are in cache). f runs on several goroutines
// at once, one per channel, for distinct pages.
func (o *Object) VisitLimb(poly, limb int, f func(off int, page []byte)) error {
	if o.released.Load() {
		return fmt.Errorf("store: read %q: %w", o.name, ErrReleased)
	}
	if err := o.s.begin(); err != nil {
		return err
	}
	defer o.s.end()
	return o.s.visitLimb(o.name, o.rec, poly, limb, f)
}

// ScanLimb is VisitLimb for a scan whose data its owner authenticates end
// to end (an LWE PIR database's sealed records and the hint computed from
// them: a changed byte fails the client's AES-GCM open, ErrTampered): each
// page's identity is checked (generation, page number: a stale or
// misplaced page is still a CorruptPageError) but not its payload CRC,
// which would be a second pass over every byte of the scan. Scrubbing the
// store (every page's CRC, off the query path) finds such corruption.
// The pages are read in place through the store's kept mappings of its
// channel files (mapped.go), f on the calling goroutine; where files
// cannot be mapped they are read as VisitLimb reads them.
func (o *Object) ScanLimb(poly, limb int, f func(off int, page []byte)) error {
	return o.scanLimb(poly, limb, true, f)
}

// ScanLimbSerial is ScanLimb on the calling goroutine alone (f too): a
// reader that shares the cores chunk by chunk (a device's scan beside
// another caller's) takes one core per chunk, not one per channel.
func (o *Object) ScanLimbSerial(poly, limb int, f func(off int, page []byte)) error {
	return o.scanLimb(poly, limb, false, f)
}

func (o *Object) scanLimb(poly, limb int, parallel bool, f func(off int, page []byte)) error {
	if o.released.Load() {
		return fmt.Errorf("store: read %q: %w", o.name, ErrReleased)
	}
	if err := o.s.begin(); err != nil {
		return err
	}
	defer o.s.end()
	if ok, err := o.s.scanLimbMapped(o.name, o.rec, &o.cached, poly, limb, f); ok {
		return err
	}
	return o.s.visitLimbAs(o.name, o.rec, poly, limb, false, parallel, f)
}

// PageSize is the store's page size.
func (s *Store) PageSize() int { return s.lay.PageSize }

// ReadAll reads every limb of the pinned generation in poly-major order,
// each channel's share of the object in one read, all channels in parallel.
func (o *Object) ReadAll() ([][]byte, error) {
	sh := o.rec.desc.Shape()
	out := make([][]byte, sh.NumLimbs())
	for i := range out {
		out[i] = make([]byte, sh.LimbBytes())
	}
	if err := o.ReadAllInto(out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadAllInto is ReadAll into caller-provided buffers: dst[poly*Limbs+limb],
// each exactly LimbBytes long.
func (o *Object) ReadAllInto(dst [][]byte) error { return o.readAllInto(dst, true) }

// ReadAllIntoSerial is ReadAllInto on the calling goroutine alone (see
// ScanLimbSerial).
func (o *Object) ReadAllIntoSerial(dst [][]byte) error { return o.readAllInto(dst, false) }

func (o *Object) readAllInto(dst [][]byte, parallel bool) error {
	if o.released.Load() {
		return fmt.Errorf("store: read %q: %w", o.name, ErrReleased)
	}
	if err := o.s.begin(); err != nil {
		return err
	}
	defer o.s.end()
	return o.s.readObject(o.name, o.rec, dst, parallel)
}

// ReadLimb reads one limb of the current generation of the named object.
func (s *Store) ReadLimb(name string, poly, limb int) ([]byte, error) {
	o, err := s.Acquire(name)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	return o.ReadLimb(poly, limb)
}

// Get reads the whole current generation of the named object: its
// description and its limbs in poly-major order.
func (s *Store) Get(name string) (Info, [][]byte, error) {
	o, err := s.Acquire(name)
	if err != nil {
		return Info{}, nil, err
	}
	defer o.Release()
	limbs, err := o.ReadAll()
	if err != nil {
		return Info{}, nil, err
	}
	return o.Info(), limbs, nil
}

// pinned lists the generations readers currently pin (for tests and stats).
func (s *Store) pinned() []Generation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Generation, 0, len(s.pins))
	for g := range s.pins {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}
