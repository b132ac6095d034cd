package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe/pir"
)

// StorePlaintexts reads a PIR database's plaintexts straight from a store
// (pir.Database): the host-only baseline, which scans the same files the
// device does, with Lattigo's evaluator. Whole objects are read (one
// positional read per channel) and the last few kept, so workers scanning
// their own row ranges each read an object once.
type StorePlaintexts struct {
	st     *store.Store
	prefix string
	n      int
	shape  pir.Shape

	mu    sync.Mutex
	objs  map[int64]*cachedObject
	order []int64
	read  int64
}

type cachedObject struct {
	once  sync.Once
	limbs [][]byte
	err   error
}

// storeCacheObjects is how many objects StorePlaintexts keeps.
const storeCacheObjects = 8

// NewStorePlaintexts reads database db of shape from st.
func NewStorePlaintexts(st *store.Store, db string, shape pir.Shape) *StorePlaintexts {
	return &StorePlaintexts{st: st, prefix: PIRPlaintextPrefix(db), n: shape.N, shape: shape, objs: map[int64]*cachedObject{}}
}

// BytesRead is what the reads took from the store so far.
func (s *StorePlaintexts) BytesRead() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// Plaintext implements pir.Database.
func (s *StorePlaintexts) Plaintext(ctx context.Context, p int, dst []uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	pos := pirPosition(s.shape, p)
	j := pos / PIRPerObject
	s.mu.Lock()
	o, ok := s.objs[j]
	if !ok {
		o = &cachedObject{}
		s.objs[j] = o
		s.order = append(s.order, j)
		if len(s.order) > storeCacheObjects {
			delete(s.objs, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	o.once.Do(func() {
		name := device.StoredObjectName(s.prefix, j)
		obj, err := s.st.Acquire(name)
		if err != nil {
			o.err = err
			return
		}
		defer obj.Release()
		if sh := obj.Info().Shape; sh.WordSize != 2 || sh.Limbs != 1 || 1<<sh.LogN != s.n {
			o.err = fmt.Errorf("runtime: %s is not a compact PIR object (%v)", name, sh)
			return
		}
		o.limbs, o.err = obj.ReadAll()
		if o.err == nil {
			s.mu.Lock()
			s.read += int64(len(o.limbs)) * int64(len(o.limbs[0]))
			s.mu.Unlock()
		}
	})
	if o.err != nil {
		return fmt.Errorf("runtime: plaintext %d: %w", p, o.err)
	}
	k := int(pos % PIRPerObject)
	if k >= len(o.limbs) || len(dst) != s.n {
		return fmt.Errorf("runtime: plaintext %d not in its object", p)
	}
	raw := o.limbs[k]
	for i := range dst {
		dst[i] = uint64(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return nil
}
