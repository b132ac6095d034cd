package kv

import (
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
)

// Table is a built cuckoo table: which item sits in each slot.
type Table struct {
	Layout Layout
	Seed   [32]byte
	items  []Item
	slot   []int32 // item index + 1 per slot; 0 is empty
}

// ErrFull: the items did not fit the table (Build draws seeds and grows
// the table before it gives up).
var ErrFull = errors.New("kv: cuckoo table full")

// maxKicks bounds one insertion's evictions.
const maxKicks = 2000

// Build places items in a table of l's shape (l.Buckets is set here): it
// tries fresh seeds, then a table a quarter larger, a few times each.
func Build(l Layout, items []Item) (*Table, error) { return BuildAtLeast(l, items, 0) }

// BuildAtLeast is Build of a table of at least buckets buckets (a cluster
// gives every shard one).
func BuildAtLeast(l Layout, items []Item, buckets int) (*Table, error) {
	l.Buckets = max(buckets, l.BucketsFor(len(items)))
	for grow := 0; grow < 4; grow++ {
		for try := 0; try < 3; try++ {
			var seed [32]byte
			if _, err := rand.Read(seed[:]); err != nil {
				return nil, fmt.Errorf("kv: %w", err)
			}
			t := &Table{Layout: l, Seed: seed, items: items, slot: make([]int32, l.Buckets*l.Slots)}
			if t.fill() {
				return t, nil
			}
		}
		l.Buckets += l.Buckets/4 + 1
	}
	return nil, fmt.Errorf("%w: %d items in %d buckets of %d slots", ErrFull, len(items), l.Buckets, l.Slots)
}

// fill inserts every item; false if one does not fit.
func (t *Table) fill() bool {
	rng := mrand.New(mrand.NewPCG(uint64(t.Seed[0])|uint64(t.Seed[1])<<8, uint64(len(t.items))))
	S := t.Layout.Slots
	for i := range t.items {
		cur := int32(i + 1)
		from := -1 // the bucket cur was evicted from
		for kick := 0; ; kick++ {
			c := Buckets(t.Seed, t.items[cur-1].Tag, t.Layout.Buckets)
			placed := false
			for _, b := range c {
				if b == from {
					continue
				}
				for s := range S {
					if t.slot[b*S+s] == 0 {
						t.slot[b*S+s] = cur
						placed = true
						break
					}
				}
				if placed {
					break
				}
			}
			if placed {
				break
			}
			if kick == maxKicks {
				return false
			}
			b := c[rng.IntN(len(c))]
			if b == from {
				b = c[0] + c[1] - b
			}
			s := rng.IntN(S)
			cur, t.slot[b*S+s] = t.slot[b*S+s], cur
			from = b
		}
	}
	return true
}

// Bucket appends bucket b, encoded, to dst.
func (t *Table) Bucket(dst []byte, b int) []byte {
	S, sb := t.Layout.Slots, t.Layout.SlotBytes()
	n := len(dst)
	dst = append(dst, make([]byte, t.Layout.BucketBytes())...)
	for s := range S {
		var it *Item
		if k := t.slot[b*S+s]; k != 0 {
			it = &t.items[k-1]
		}
		encodeSlot(dst[n+s*sb:n+(s+1)*sb], it)
	}
	return dst
}
