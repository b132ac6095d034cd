package pirserver

import (
	"fmt"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/fhe/lwepir"
)

// keyObject is a generation of a stored object.
type keyObject struct {
	name string
	gen  store.Generation
}

// keyCache caches decoded Galois keys by object generation (a key is
// ~0.8 MB and decoding it costs more than a small query).
type keyCache struct {
	mu    sync.Mutex
	items map[keyObject]*rlwe.GaloisKey
}

// keyCacheEntries bounds the cache: 16 keys (eight clients' pairs,
// 13 MB at the default parameters). With more clients than that a key is
// read and decoded again per query, a millisecond beside its ring stage's
// tenth of a second; the memory stays the device's to bound.
const keyCacheEntries = 16

// check reports whether name is a stored key object of p's ring, from its
// metadata (nothing is read).
func (c *keyCache) check(st *store.Store, p lwepir.Params, name string) error {
	o, err := c.acquire(st, p, name)
	if err != nil {
		return err
	}
	o.Release()
	return nil
}

// acquire pins key object name, checking its metadata.
func (c *keyCache) acquire(st *store.Store, p lwepir.Params, name string) (*store.Object, error) {
	o, err := st.Acquire(name)
	if err != nil {
		return nil, fmt.Errorf("%w: key object %q: %w", api.ErrNotFound, name, err)
	}
	info := o.Info()
	size := lwepir.GaloisKeyBytes(p)
	if info.Kind != object.KindKey || info.Shape.WordSize != 8 || info.Shape.Polys != 1 ||
		info.Shape.Bytes() < int64(size) || info.Shape.Bytes() >= int64(size)+int64(info.Shape.LimbBytes()) {
		o.Release()
		return nil, fmt.Errorf("%w: key object %q is not a key of the program's ring", api.ErrInvalid, name)
	}
	return o, nil
}

func (c *keyCache) get(st *store.Store, p lwepir.Params, name string) (*rlwe.GaloisKey, error) {
	o, err := c.acquire(st, p, name)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	info := o.Info()
	k := keyObject{name: name, gen: info.Generation}
	c.mu.Lock()
	if gk, ok := c.items[k]; ok {
		c.mu.Unlock()
		return gk, nil
	}
	c.mu.Unlock()
	size := lwepir.GaloisKeyBytes(p)
	limbs, err := o.ReadAll()
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, info.Shape.Bytes())
	for _, l := range limbs {
		raw = append(raw, l...)
	}
	for _, b := range raw[size:] {
		if b != 0 {
			return nil, fmt.Errorf("%w: key object %q: bytes after the key", api.ErrInvalid, name)
		}
	}
	raw = raw[:size]
	gk, err := lwepir.UnmarshalGaloisKey(p, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: key object %q: %w", api.ErrInvalid, name, err)
	}
	c.mu.Lock()
	if c.items == nil || len(c.items) >= keyCacheEntries {
		c.items = map[keyObject]*rlwe.GaloisKey{}
	}
	c.items[k] = gk
	c.mu.Unlock()
	return gk, nil
}
