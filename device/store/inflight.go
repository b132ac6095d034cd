package store

import (
	"cmp"
	"slices"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// Puts write their pages without holding the writer lock (wmu): held
// while a 16 MiB generation was written and fsynced, it kept every small
// write of another object waiting behind it (a delta update behind a
// compaction's tile). A Put plans under the lock — its generation number
// and rows, which it reserves here so that no other Put plans them —
// writes and fsyncs its pages alone, and takes the lock again to
// publish. Writers of one object still go one at a time (nameLocks): its
// generations are published in the order they were numbered, and a
// conditional write (PutIf, DeleteIf) sees no other writer of its object
// between its check and its publication.

// inflight is what the Puts still writing hold (guarded by wmu): the
// last generation number handed out and the rows reserved.
type inflight struct {
	lastGen Generation
	rows    []layout.Extent
}

// reserve records rows planned by a Put.
func (f *inflight) reserve(e ...layout.Extent) { f.rows = append(f.rows, e...) }

// release forgets rows a Put published or abandoned.
func (f *inflight) release(e ...layout.Extent) {
	f.rows = slices.DeleteFunc(f.rows, func(r layout.Extent) bool { return slices.Contains(e, r) })
}

// allocator plans against the committed free list and hwm less the rows
// reserved by Puts still writing. Rows above hwm that no Put reserved
// (between reservations, or left by a Put that failed) are free too: a
// Put that publishes rows above hwm first frees the gap below them
// (freeGap).
func (f *inflight) allocator(free []layout.Extent, hwm uint32) allocator {
	res := slices.Clone(f.rows)
	slices.SortFunc(res, func(a, b layout.Extent) int { return cmp.Compare(a.Start, b.Start) })
	top := uint64(hwm)
	for _, r := range res {
		top = max(top, r.End())
	}
	space := append(slices.Clone(free), layout.Extent{Start: hwm, Rows: uint32(top - uint64(hwm))})
	var pieces []layout.Extent
	for _, e := range space {
		start, end := uint64(e.Start), e.End()
		for _, r := range res {
			if r.End() <= start || uint64(r.Start) >= end {
				continue
			}
			if uint64(r.Start) > start {
				pieces = append(pieces, layout.Extent{Start: uint32(start), Rows: uint32(uint64(r.Start) - start)})
			}
			start = max(start, r.End())
		}
		if start < end {
			pieces = append(pieces, layout.Extent{Start: uint32(start), Rows: uint32(end - start)})
		}
	}
	return allocator{free: pieces, hwm: top}
}

// nameLocks lets the writers of one object go one at a time.
type nameLocks struct {
	mu   sync.Mutex
	held map[string]*nameLock
}

type nameLock struct {
	mu    sync.Mutex
	users int // holders and waiters
}

// lock waits until no other writer holds name; the returned func lets
// the next one go.
func (n *nameLocks) lock(name string) (unlock func()) {
	n.mu.Lock()
	if n.held == nil {
		n.held = map[string]*nameLock{}
	}
	l := n.held[name]
	if l == nil {
		l = &nameLock{}
		n.held[name] = l
	}
	l.users++
	n.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		n.mu.Lock()
		if l.users--; l.users == 0 {
			delete(n.held, name)
		}
		n.mu.Unlock()
	}
}
