package kv

// What every lookup does with the buckets it read, wherever they are
// stored (one device, or shards of a cluster).

// Tags are the tags of every chunk a lookup of key reads: MaxChunks of
// them, whatever the key.
func (l Layout) Tags(h *Hasher, key []byte) []Tag {
	out := make([]Tag, l.MaxChunks())
	for j := range out {
		out[j] = h.Tag(key, j)
	}
	return out
}

// Candidates are the buckets tags may sit in, Choices per tag in order.
func (l Layout) Candidates(seed [32]byte, tags []Tag) []int {
	out := make([]int, 0, len(tags)*Choices)
	for _, t := range tags {
		b := Buckets(seed, t, l.Buckets)
		out = append(out, b[:]...)
	}
	return out
}

// Find returns the value tags name in buckets, the buckets read for them
// (ordered as Candidates gives them); found is false if chunk 0 is in
// neither of its buckets.
func (l Layout) Find(buckets [][]byte, tags []Tag) (value []byte, found bool, err error) {
	if len(buckets) != len(tags)*Choices {
		return nil, false, ErrBucket
	}
	items := make([]*Item, len(tags))
	for j, t := range tags {
		for q := range Choices {
			its, err := l.DecodeBucket(buckets[j*Choices+q])
			if err != nil {
				return nil, false, err
			}
			for x := range its {
				if its[x].Tag == t {
					items[j] = &its[x]
				}
			}
		}
	}
	return l.Assemble(items)
}
