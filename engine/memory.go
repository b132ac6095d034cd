package engine

import (
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
)

// ObjectMemory holds the DRAM and NAND objects LD and ST reach. The device
// backs it with the object store; tests and the host use MemObjects.
type ObjectMemory interface {
	// ReadLimb copies limb `limb` of object obj in space s into dst.
	ReadLimb(s isa.Space, obj, limb int, dst []uint64) error
	// WriteLimb stores src as limb `limb` of object obj in space s.
	WriteLimb(s isa.Space, obj, limb int, src []uint64) error
}

// MemObjects is an in-memory ObjectMemory. It lends limbs to the
// interpreter without copying (LimbViewer) after checking them once per
// modulus; a limb replaced by Set or WriteLimb is checked again.
type MemObjects struct {
	mu      sync.RWMutex
	objects map[objKey][][]uint64
	checked map[limbKey]uint64 // limb → modulus it was checked against
	owned   map[limbKey]bool   // limbs allocated here (safe to overwrite)
}

type limbKey struct {
	objKey
	limb int
}

type objKey struct {
	space isa.Space
	obj   int
}

// NewMemObjects returns an empty object memory.
func NewMemObjects() *MemObjects {
	return &MemObjects{objects: map[objKey][][]uint64{}, checked: map[limbKey]uint64{}, owned: map[limbKey]bool{}}
}

// Set stores an object (limbs are not copied).
func (m *MemObjects) Set(s isa.Space, obj int, limbs [][]uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := objKey{s, obj}
	for l := range m.objects[k] {
		delete(m.checked, limbKey{k, l})
		delete(m.owned, limbKey{k, l})
	}
	m.objects[k] = limbs
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
	if len(o[limb]) == len(src) && m.owned[limbKey{k, limb}] {
		copy(o[limb], src) // reuse the buffer a previous WriteLimb allocated
	} else {
		o[limb] = append([]uint64(nil), src...)
		m.owned[limbKey{k, limb}] = true
	}
	m.objects[k] = o
	delete(m.checked, limbKey{k, limb})
	return nil
}

// ViewLimb implements LimbViewer: it returns the stored limb itself (the
// caller must not modify it) after checking its coefficients are below q.
func (m *MemObjects) ViewLimb(s isa.Space, obj, limb int, q uint64) ([]uint64, error) {
	k := limbKey{objKey{s, obj}, limb}
	m.mu.RLock()
	o, ok := m.objects[k.objKey]
	var v []uint64
	if ok && limb < len(o) {
		v = o[limb]
	}
	done := m.checked[k] == q
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("engine: no object %s[%d]", s, obj)
	}
	if v == nil {
		return nil, fmt.Errorf("engine: object %s[%d] has no limb %d (%d limbs)", s, obj, limb, len(o))
	}
	if !done {
		if err := checkReduced(v, q, isa.Obj(s, obj, limb)); err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.checked[k] = q
		m.mu.Unlock()
	}
	return v, nil
}
