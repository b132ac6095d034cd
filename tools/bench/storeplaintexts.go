package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// storePlaintexts reads a PIR database's plaintexts straight from a store
// (pir.Database): the host-only baseline, which scans the same files the
// device does, with Lattigo's evaluator. It serves one query and reads each
// stored object once: whole, when the first of its plaintexts is asked for,
// and dropped when the last one the query needs has been copied out. The
// server asks row by row while the store keeps tiles of PIRTileRows rows
// column by column, so an object is needed by every row of its tile; what
// is held is about one tile per worker (and one a worker boundary splits).
type storePlaintexts struct {
	st    *store.Store
	db    string
	n     int
	shape pir.Shape

	mu      sync.Mutex
	objs    map[string]*cachedObject
	pending map[string]int // plaintexts of each object the query has yet to ask for
	reads   map[string]int // reads of each object
	bytes   int64          // payload bytes read
}

type cachedObject struct {
	once  sync.Once
	limbs [][]byte
	err   error
}

// newStorePlaintexts reads database db of shape from st, for one query
// over its shape.Plaintexts plaintexts.
func newStorePlaintexts(st *store.Store, db string, shape pir.Shape) *storePlaintexts {
	s := &storePlaintexts{st: st, db: db, n: shape.N, shape: shape,
		objs: map[string]*cachedObject{}, pending: map[string]int{}, reads: map[string]int{}}
	for p := range shape.Plaintexts {
		name, _ := client.PIRPlaintextObject(db, shape, p)
		s.pending[name]++
	}
	return s
}

// Plaintext implements pir.Database.
func (s *storePlaintexts) Plaintext(ctx context.Context, p int, dst []uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name, k := client.PIRPlaintextObject(s.db, s.shape, p)
	s.mu.Lock()
	o, ok := s.objs[name]
	if !ok {
		o = &cachedObject{}
		s.objs[name] = o
	}
	s.mu.Unlock()
	o.once.Do(func() { o.limbs, o.err = s.read(name) })
	defer s.done(name)
	if o.err != nil {
		return fmt.Errorf("bench: plaintext %d: %w", p, o.err)
	}
	if k >= len(o.limbs) || len(dst) != s.n {
		return fmt.Errorf("bench: plaintext %d not in its object", p)
	}
	raw := o.limbs[k]
	for i := range dst {
		dst[i] = uint64(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return nil
}

// read reads object name whole, counting it.
func (s *storePlaintexts) read(name string) ([][]byte, error) {
	obj, err := s.st.Acquire(name)
	if err != nil {
		return nil, err
	}
	defer obj.Release()
	if sh := obj.Info().Shape; sh.WordSize != 2 || sh.Limbs != 1 || 1<<sh.LogN != s.n {
		return nil, fmt.Errorf("bench: %s is not a compact PIR object (%v)", name, sh)
	}
	limbs, err := obj.ReadAll()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads[name]++
	for _, l := range limbs {
		s.bytes += int64(len(l))
	}
	return limbs, err
}

// done drops object name once the query has asked for all its plaintexts.
func (s *storePlaintexts) done(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[name]--; s.pending[name] <= 0 {
		delete(s.objs, name)
	}
}

// scannedOnce checks what the query read: every object holding one of its
// plaintexts exactly once, nothing else. It returns the bytes read.
func (s *storePlaintexts) scannedOnce() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.pending {
		if r := s.reads[name]; r != 1 {
			return s.bytes, fmt.Errorf("bench: the host-only scan read %s %d times, want once", name, r)
		}
	}
	if len(s.reads) != len(s.pending) {
		return s.bytes, fmt.Errorf("bench: the host-only scan read %d objects, the query needs %d", len(s.reads), len(s.pending))
	}
	var want int64
	for name := range s.pending {
		info, err := s.st.Stat(name)
		if err != nil {
			return s.bytes, err
		}
		want += info.Bytes
	}
	if s.bytes != want {
		return s.bytes, fmt.Errorf("bench: the host-only scan read %d bytes of objects holding %d", s.bytes, want)
	}
	return s.bytes, nil
}
