package kv

// Fold applies a delta's puts and deletes to the items of a table being
// rebuilt (a compaction): the last operation on a key decides it; every
// chunk of a key the delta changed is dropped from the old items, its new
// value's chunks added. It keeps no map of the table's items, only of the
// changed keys.
type Fold struct {
	l       Layout
	h       *Hasher
	ops     []Op
	last    map[string]int // key → index of its last operation
	changed []string       // in order of first change
	drop    map[Tag]bool   // every chunk tag of a changed key
	first   map[Tag]bool   // chunk 0's: was the key in the old table?
}

// NewFold prepares to fold ops into a table of layout l, tagged by h.
func NewFold(l Layout, h *Hasher, ops []Op) *Fold {
	f := &Fold{l: l, h: h, ops: ops, last: map[string]int{}, drop: map[Tag]bool{}, first: map[Tag]bool{}}
	for i, o := range ops {
		if o.Kind != OpPut && o.Kind != OpDelete {
			continue
		}
		if _, ok := f.last[string(o.Key)]; !ok {
			f.changed = append(f.changed, string(o.Key))
		}
		f.last[string(o.Key)] = i
	}
	for _, k := range f.changed {
		for j := range l.MaxChunks() {
			f.drop[h.Tag([]byte(k), j)] = true
		}
		f.first[h.Tag([]byte(k), 0)] = false
	}
	return f
}

// Keep reports whether an item of the old table stays (it is no chunk of
// a key the delta changed).
func (f *Fold) Keep(it *Item) bool {
	if !f.drop[it.Tag] {
		return true
	}
	if _, ok := f.first[it.Tag]; ok {
		f.first[it.Tag] = true
	}
	return false
}

// Added returns the items of the changed keys' new values, and entries
// (the old table's key count) adjusted for what the delta did; call it
// once every old item has been through Keep.
func (f *Fold) Added(entries int) ([]Item, int) {
	var items []Item
	for _, k := range f.changed {
		if f.first[f.h.Tag([]byte(k), 0)] {
			entries--
		}
		if o := f.ops[f.last[k]]; o.Kind == OpPut {
			items = append(items, f.l.Split(f.h, o.Key, o.Value)...)
			entries++
		}
	}
	return items, entries
}

// AddedEntries is Added for a heap's index (a Fold of IndexLayout): the
// changed keys' new values whole, under their keys' tags, and entries
// adjusted; call it once every old item has been through Keep.
func (f *Fold) AddedEntries(entries int) ([]Entry, int) {
	var out []Entry
	for _, k := range f.changed {
		if f.first[f.h.Tag([]byte(k), 0)] {
			entries--
		}
		if o := f.ops[f.last[k]]; o.Kind == OpPut {
			out = append(out, Entry{Tag: f.h.Tag(o.Key, 0), Value: o.Value})
			entries++
		}
	}
	return out, entries
}
