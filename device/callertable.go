package device

import (
	"container/list"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/api"
)

// callerTable holds named entries charged to the callers that made them,
// so that no caller can fill it for the others: one caller's entries
// weigh perCaller at most (setting another evicts its own least recently
// used first), and all callers' total at most (the caller holding the
// most weight loses its least recently used). Caller "" (in process, or
// a plaintext server's one identity: quotaCaller) has the whole table. A caller within its share
// is evicted only when the table is full and it holds the most. Entry
// names are the table's keys (a served device's program names are in the
// caller's namespace already, authz.Guarded). Safe for concurrent use.
type callerTable[V any] struct {
	what             string // "programs", "key bytes": for errors
	perCaller, total int64

	mu      sync.Mutex
	byName  map[string]*list.Element
	callers map[string]*callerEntries
	used    int64
	evicted int64
}

type callerEntries struct {
	order *list.List // of *tableEntry; front: most recently used
	used  int64
}

type tableEntry[V any] struct {
	caller, name string
	v            V
	weight       int64
}

func newCallerTable[V any](what string, perCaller, total int64) *callerTable[V] {
	return &callerTable[V]{what: what, perCaller: min(perCaller, total), total: total,
		byName: map[string]*list.Element{}, callers: map[string]*callerEntries{}}
}

// get returns the named entry, marking it used.
func (t *callerTable[V]) get(name string) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byName[name]
	if !ok {
		var zero V
		return zero, false
	}
	ent := e.Value.(*tableEntry[V])
	t.callers[ent.caller].order.MoveToFront(e)
	return ent.v, true
}

// add sets name to v for caller, weighing w, and returns v; if name is
// set already it returns the entry there instead (and false), unchanged.
// An entry heavier than a caller's share is refused (api.ErrExhausted).
func (t *callerTable[V]) add(caller, name string, v V, w int64) (V, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byName[name]; ok {
		ent := e.Value.(*tableEntry[V])
		t.callers[ent.caller].order.MoveToFront(e)
		return ent.v, false, nil
	}
	share := t.perCaller
	if caller == "" {
		share = t.total
	}
	if w > share {
		var zero V
		return zero, false, fmt.Errorf("%w: %d %s exceed a caller's %d", api.ErrExhausted, w, t.what, share)
	}
	c := t.callers[caller]
	if c == nil {
		c = &callerEntries{order: list.New()}
		t.callers[caller] = c
	}
	for c.used+w > share {
		t.evictLocked(c)
	}
	for t.used+w > t.total {
		t.evictLocked(t.heaviestLocked())
	}
	t.callers[caller] = c // evicting its last entry may have dropped it
	ent := &tableEntry[V]{caller: caller, name: name, v: v, weight: w}
	t.byName[name] = c.order.PushFront(ent)
	c.used += w
	t.used += w
	return v, true, nil
}

// heaviestLocked is the caller holding the most weight.
func (t *callerTable[V]) heaviestLocked() *callerEntries {
	var top *callerEntries
	for _, c := range t.callers {
		if top == nil || c.used > top.used {
			top = c
		}
	}
	return top
}

// evictLocked drops c's least recently used entry.
func (t *callerTable[V]) evictLocked(c *callerEntries) {
	e := c.order.Back()
	ent := e.Value.(*tableEntry[V])
	c.order.Remove(e)
	delete(t.byName, ent.name)
	c.used -= ent.weight
	t.used -= ent.weight
	t.evicted++
	if c.order.Len() == 0 {
		delete(t.callers, ent.caller)
	}
}

// len is the number of entries.
func (t *callerTable[V]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byName)
}

// usedBy is the weight caller holds.
func (t *callerTable[V]) usedBy(caller string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.callers[caller]; c != nil {
		return c.used
	}
	return 0
}
