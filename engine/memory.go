package engine

import (
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/isa"
)

// ObjectMemory holds the DRAM and NAND objects LD and ST reach. The device
// backs it with the object store; tests and the host use MemObjects.
type ObjectMemory interface {
	// ReadLimb copies limb `limb` of object obj in space s into dst.
	ReadLimb(s isa.Space, obj, limb int, dst []uint64) error
	// WriteLimb stores src as limb `limb` of object obj in space s.
	WriteLimb(s isa.Space, obj, limb int, src []uint64) error
}

// MemObjects is an in-memory ObjectMemory.
type MemObjects struct {
	mu      sync.RWMutex
	objects map[objKey][][]uint64
}

type objKey struct {
	space isa.Space
	obj   int
}

// NewMemObjects returns an empty object memory.
func NewMemObjects() *MemObjects { return &MemObjects{objects: map[objKey][][]uint64{}} }

// Set stores an object (limbs are not copied).
func (m *MemObjects) Set(s isa.Space, obj int, limbs [][]uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[objKey{s, obj}] = limbs
}

// Get returns an object's limbs (nil if absent).
func (m *MemObjects) Get(s isa.Space, obj int) [][]uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.objects[objKey{s, obj}]
}

// ReadLimb implements ObjectMemory.
func (m *MemObjects) ReadLimb(s isa.Space, obj, limb int, dst []uint64) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.objects[objKey{s, obj}]
	if !ok {
		return fmt.Errorf("engine: no object %s[%d]", s, obj)
	}
	if limb >= len(o) || o[limb] == nil {
		return fmt.Errorf("engine: object %s[%d] has no limb %d (%d limbs)", s, obj, limb, len(o))
	}
	if len(o[limb]) != len(dst) {
		return fmt.Errorf("engine: object %s[%d] limb %d has %d coefficients, want %d", s, obj, limb, len(o[limb]), len(dst))
	}
	copy(dst, o[limb])
	return nil
}

// WriteLimb implements ObjectMemory.
func (m *MemObjects) WriteLimb(s isa.Space, obj, limb int, src []uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := objKey{s, obj}
	o := m.objects[k]
	for len(o) <= limb {
		o = append(o, nil)
	}
	o[limb] = append([]uint64(nil), src...)
	m.objects[k] = o
	return nil
}
