package device

import (
	"container/list"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/store"
)

// keyCache keeps recently read evaluation-key limbs in device memory, the
// role the paper gives the eDRAM scratchpad for hot keys: a rotation that
// reuses a key does not read it from the store again. Entries are keyed by
// object generation, so a replaced key is never served stale. The cache is
// an LRU bounded in bytes and safe for concurrent jobs.
type keyCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	order *list.List // front: most recently used
	items map[keyLimb]*list.Element
	hits  int64
}

type keyLimb struct {
	name        string
	gen         store.Generation
	poly, limb  int
	coefficient int // limb length, so differently shaped reads never mix
}

type cacheEntry struct {
	k keyLimb
	v []uint64
}

func newKeyCache(limit int64) *keyCache {
	return &keyCache{limit: limit, order: list.New(), items: map[keyLimb]*list.Element{}}
}

// get copies a cached limb into dst and reports whether it was there.
func (c *keyCache) get(k keyLimb, dst []uint64) bool {
	if c == nil || c.limit <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return false
	}
	c.order.MoveToFront(e)
	copy(dst, e.Value.(*cacheEntry).v)
	c.hits++
	return true
}

// put stores a copy of v, evicting the least recently used limbs.
func (c *keyCache) put(k keyLimb, v []uint64) {
	size := int64(8 * len(v))
	if c == nil || size > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	for c.used+size > c.limit {
		last := c.order.Back()
		ent := last.Value.(*cacheEntry)
		c.order.Remove(last)
		delete(c.items, ent.k)
		c.used -= int64(8 * len(ent.v))
	}
	c.items[k] = c.order.PushFront(&cacheEntry{k: k, v: append([]uint64(nil), v...)})
	c.used += size
}
