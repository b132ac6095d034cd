package engine

import (
	"container/list"
	"sync"
)

// tableCache is a bounded cache of precomputed tables keyed by (N, x):
// least recently used entries leave once the entries hold more than max
// bytes. The primes and Galois elements tables are built for come from
// programs a client registers, so the cache must not grow with them; a
// table in use stays alive through its users whether or not the cache
// still holds it, so eviction costs at most a rebuild.
type tableCache[T any] struct {
	max int64

	mu    sync.Mutex
	bytes int64
	lru   *list.List // of *tableEntry[T], most recent first
	byKey map[[2]uint64]*list.Element
}

type tableEntry[T any] struct {
	key   [2]uint64
	v     T
	bytes int64
}

func newTableCache[T any](max int64) *tableCache[T] {
	return &tableCache[T]{max: max, lru: list.New(), byKey: map[[2]uint64]*list.Element{}}
}

// get returns the table of key, building it (outside the lock: tables of
// large rings take milliseconds) if the cache does not hold it. Two
// callers may build the same table at once; one of them is kept.
func (c *tableCache[T]) get(key [2]uint64, build func() (T, int64, error)) (T, error) {
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		v := e.Value.(*tableEntry[T]).v
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	v, b, err := build()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*tableEntry[T]).v, nil
	}
	if b > c.max {
		return v, nil // larger than the whole cache: not kept
	}
	c.byKey[key] = c.lru.PushFront(&tableEntry[T]{key: key, v: v, bytes: b})
	c.bytes += b
	for c.bytes > c.max {
		e := c.lru.Back()
		te := e.Value.(*tableEntry[T])
		c.lru.Remove(e)
		delete(c.byKey, te.key)
		c.bytes -= te.bytes
	}
	return v, nil
}

// stats returns the entries and bytes the cache holds.
func (c *tableCache[T]) stats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
