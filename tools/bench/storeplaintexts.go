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
// device does, with Lattigo's evaluator. Whole objects are read (one
// positional read per channel) and the last few kept, so workers scanning
// their own row ranges each read an object once.
type storePlaintexts struct {
	st    *store.Store
	db    string
	n     int
	shape pir.Shape

	mu    sync.Mutex
	objs  map[string]*cachedObject
	order []string
}

type cachedObject struct {
	once  sync.Once
	limbs [][]byte
	err   error
}

// storeCacheObjects is how many objects storePlaintexts keeps.
const storeCacheObjects = 8

// newStorePlaintexts reads database db of shape from st.
func newStorePlaintexts(st *store.Store, db string, shape pir.Shape) *storePlaintexts {
	return &storePlaintexts{st: st, db: db, n: shape.N, shape: shape, objs: map[string]*cachedObject{}}
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
		s.order = append(s.order, name)
		if len(s.order) > storeCacheObjects {
			delete(s.objs, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	o.once.Do(func() {
		obj, err := s.st.Acquire(name)
		if err != nil {
			o.err = err
			return
		}
		defer obj.Release()
		if sh := obj.Info().Shape; sh.WordSize != 2 || sh.Limbs != 1 || 1<<sh.LogN != s.n {
			o.err = fmt.Errorf("bench: %s is not a compact PIR object (%v)", name, sh)
			return
		}
		o.limbs, o.err = obj.ReadAll()
	})
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
