package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sort"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
	bolt "go.etcd.io/bbolt"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	bucketMeta    = []byte("meta")
	bucketObjects = []byte("objects")
	bucketDead    = []byte("dead")
	bucketFree    = []byte("free")
	keyLayout     = []byte("layout")
	keyHWM        = []byte("hwm")
	keyGen        = []byte("gen")
)

// record is the catalog entry of one generation of an object.
type record struct {
	gen  Generation
	desc layout.Descriptor
}

const (
	recordVersion = 1
	recordSize    = 1 + 8 + layout.DescriptorSize + 4
)

func encodeRecord(r record) ([]byte, error) {
	b := make([]byte, 9, recordSize)
	b[0] = recordVersion
	binary.LittleEndian.PutUint64(b[1:], uint64(r.gen))
	b, err := r.desc.AppendBinary(b)
	if err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

func decodeRecord(b []byte) (record, error) {
	if len(b) != recordSize {
		return record{}, fmt.Errorf("record is %d bytes, want %d", len(b), recordSize)
	}
	if got, want := binary.LittleEndian.Uint32(b[recordSize-4:]), crc32.Checksum(b[:recordSize-4], castagnoli); got != want {
		return record{}, fmt.Errorf("record checksum %#08x, want %#08x", got, want)
	}
	if b[0] != recordVersion {
		return record{}, fmt.Errorf("record version %d unsupported", b[0])
	}
	r := record{gen: Generation(binary.LittleEndian.Uint64(b[1:]))}
	if r.gen == 0 {
		return record{}, errors.New("record has generation 0")
	}
	if err := r.desc.UnmarshalBinary(b[9 : 9+layout.DescriptorSize]); err != nil {
		return record{}, err
	}
	if _, err := kindOf(r.desc.Class); err != nil {
		return record{}, err
	}
	return r, nil
}

func genKey(g Generation) []byte { return binary.BigEndian.AppendUint64(nil, uint64(g)) }

func decodeGenKey(k []byte) (Generation, error) {
	if len(k) != 8 {
		return 0, fmt.Errorf("generation key is %d bytes, want 8", len(k))
	}
	return Generation(binary.BigEndian.Uint64(k)), nil
}

func extentKey(start uint32) []byte { return binary.BigEndian.AppendUint32(nil, start) }

func encodeExtentValue(rows uint32) []byte { return binary.LittleEndian.AppendUint32(nil, rows) }

// decodeExtent decodes a free-list entry.
func decodeExtent(k, v []byte) (layout.Extent, error) {
	if len(k) != 4 || len(v) != 4 {
		return layout.Extent{}, fmt.Errorf("free extent entry has %d-byte key and %d-byte value, want 4 and 4", len(k), len(v))
	}
	e := layout.Extent{Start: binary.BigEndian.Uint32(k), Rows: binary.LittleEndian.Uint32(v)}
	if e.Rows == 0 {
		return layout.Extent{}, fmt.Errorf("free extent at row %d is empty", e.Start)
	}
	if e.End() > math.MaxUint32 {
		return layout.Extent{}, fmt.Errorf("free extent at row %d with %d rows passes row 2^32-1", e.Start, e.Rows)
	}
	return e, nil
}

func decodeUint32(name string, b []byte) (uint32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("meta %s is %d bytes, want 4", name, len(b))
	}
	return binary.LittleEndian.Uint32(b), nil
}

func decodeUint64(name string, b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("meta %s is %d bytes, want 8", name, len(b))
	}
	return binary.LittleEndian.Uint64(b), nil
}

// catalogState is the whole catalog decoded, as Open loads it.
type catalogState struct {
	objects map[string]record
	dead    []record
	free    []layout.Extent
	hwm     uint32
	gen     Generation
}

// loadCatalog decodes and cross-checks every catalog entry.
func loadCatalog(tx *bolt.Tx, l layout.Layout) (*catalogState, error) {
	st := &catalogState{objects: map[string]record{}}
	meta := tx.Bucket(bucketMeta)
	hwm, err := decodeUint32("hwm", meta.Get(keyHWM))
	if err != nil {
		return nil, err
	}
	gen, err := decodeUint64("gen", meta.Get(keyGen))
	if err != nil {
		return nil, err
	}
	st.hwm, st.gen = hwm, Generation(gen)
	type owned struct {
		e     layout.Extent
		owner string
	}
	var all []owned
	gens := map[Generation]string{}
	addOwner := func(r record, owner string) error {
		if r.gen > st.gen {
			return fmt.Errorf("%s has generation %d above the last published %d", owner, r.gen, st.gen)
		}
		if prev, dup := gens[r.gen]; dup {
			return fmt.Errorf("%s and %s both have generation %d", prev, owner, r.gen)
		}
		gens[r.gen] = owner
		ext, err := l.Extents(r.desc)
		if err != nil {
			return fmt.Errorf("%s: %w", owner, err)
		}
		for _, e := range ext {
			all = append(all, owned{e, owner})
		}
		return nil
	}
	err = tx.Bucket(bucketObjects).ForEach(func(k, v []byte) error {
		r, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("object %q: %w", k, err)
		}
		st.objects[string(k)] = r
		return addOwner(r, fmt.Sprintf("object %q", k))
	})
	if err != nil {
		return nil, err
	}
	err = tx.Bucket(bucketDead).ForEach(func(k, v []byte) error {
		g, err := decodeGenKey(k)
		if err != nil {
			return fmt.Errorf("dead generation: %w", err)
		}
		r, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("dead generation %d: %w", g, err)
		}
		if r.gen != g {
			return fmt.Errorf("dead generation %d holds a record of generation %d", g, r.gen)
		}
		st.dead = append(st.dead, r)
		return addOwner(r, fmt.Sprintf("dead generation %d", g))
	})
	if err != nil {
		return nil, err
	}
	err = tx.Bucket(bucketFree).ForEach(func(k, v []byte) error {
		e, err := decodeExtent(k, v)
		if err != nil {
			return err
		}
		st.free = append(st.free, e)
		all = append(all, owned{e, "free list"})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].e.Start < all[j].e.Start })
	var next uint64
	for _, o := range all {
		if uint64(o.e.Start) != next {
			if uint64(o.e.Start) < next {
				return nil, fmt.Errorf("rows [%d, %d) of %s overlap other extents", o.e.Start, o.e.End(), o.owner)
			}
			return nil, fmt.Errorf("rows [%d, %d) below hwm %d belong to nothing (leaked)", next, o.e.Start, hwm)
		}
		next = o.e.End()
	}
	if next != uint64(hwm) {
		return nil, fmt.Errorf("extents end at row %d, hwm is %d", next, hwm)
	}
	if n := len(st.free); n > 0 && st.free[n-1].End() == uint64(hwm) {
		return nil, fmt.Errorf("free extent [%d, %d) touches hwm", st.free[n-1].Start, hwm)
	}
	return st, nil
}

// allocator plans row allocations against a snapshot of the free list.
type allocator struct {
	free []layout.Extent // sorted by Start
	hwm  uint64
}

// alloc reserves rows consecutive rows: first fit in the free list, else
// above hwm.
func (a *allocator) alloc(rows int64) (uint32, error) {
	for i := range a.free {
		if int64(a.free[i].Rows) >= rows {
			start := a.free[i].Start
			a.free[i].Start += uint32(rows)
			a.free[i].Rows -= uint32(rows)
			return start, nil
		}
	}
	if a.hwm+uint64(rows) > math.MaxUint32 {
		return 0, fmt.Errorf("%w: %d more rows do not fit above row %d", ErrFull, rows, a.hwm)
	}
	start := uint32(a.hwm)
	a.hwm += uint64(rows)
	return start, nil
}

// takeRows marks rows [start, start+rows) as used in the catalog: they come
// either from one free extent or from above hwm.
func takeRows(tx *bolt.Tx, start, rows uint32) error {
	meta := tx.Bucket(bucketMeta)
	hwm, err := decodeUint32("hwm", meta.Get(keyHWM))
	if err != nil {
		return err
	}
	end := uint64(start) + uint64(rows)
	if start >= hwm {
		if start != hwm {
			return fmt.Errorf("allocation at row %d leaves a gap above hwm %d", start, hwm)
		}
		return meta.Put(keyHWM, binary.LittleEndian.AppendUint32(nil, uint32(end)))
	}
	free := tx.Bucket(bucketFree)
	c := free.Cursor()
	k, v := c.Seek(extentKey(start))
	if k == nil || binary.BigEndian.Uint32(k) != start {
		k, v = c.Prev()
	}
	if k == nil {
		return fmt.Errorf("rows [%d, %d) are not free", start, end)
	}
	e, err := decodeExtent(k, v)
	if err != nil {
		return err
	}
	if e.Start > start || e.End() < end {
		return fmt.Errorf("rows [%d, %d) are not inside free extent [%d, %d)", start, end, e.Start, e.End())
	}
	if err := free.Delete(k); err != nil {
		return err
	}
	if e.Start < start {
		if err := free.Put(extentKey(e.Start), encodeExtentValue(start-e.Start)); err != nil {
			return err
		}
	}
	if e.End() > end {
		if err := free.Put(extentKey(uint32(end)), encodeExtentValue(uint32(e.End()-end))); err != nil {
			return err
		}
	}
	return nil
}

// freeGap prepares the publication of rows starting at start: if start
// is above hwm, rows [hwm, start) become a free extent and hwm start.
// Those rows were planned by Puts still writing (which take them from
// the free list when they publish) or by Puts that failed.
func freeGap(tx *bolt.Tx, start uint32) error {
	meta := tx.Bucket(bucketMeta)
	hwm, err := decodeUint32("hwm", meta.Get(keyHWM))
	if err != nil {
		return err
	}
	if start <= hwm {
		return nil
	}
	if err := tx.Bucket(bucketFree).Put(extentKey(hwm), encodeExtentValue(start-hwm)); err != nil {
		return err
	}
	return meta.Put(keyHWM, binary.LittleEndian.AppendUint32(nil, start))
}

// releaseRows returns rows to the free list, coalescing with neighbours and
// lowering hwm when the freed space reaches it.
func releaseRows(tx *bolt.Tx, e layout.Extent) error {
	meta := tx.Bucket(bucketMeta)
	hwm, err := decodeUint32("hwm", meta.Get(keyHWM))
	if err != nil {
		return err
	}
	if e.End() > uint64(hwm) {
		return fmt.Errorf("freeing rows [%d, %d) above hwm %d", e.Start, e.End(), hwm)
	}
	free := tx.Bucket(bucketFree)
	c := free.Cursor()
	start, end := uint64(e.Start), e.End()
	// Next extent (first with Start >= e.Start).
	if k, v := c.Seek(extentKey(e.Start)); k != nil {
		n, err := decodeExtent(k, v)
		if err != nil {
			return err
		}
		if uint64(n.Start) < end {
			return fmt.Errorf("freeing rows [%d, %d) that overlap free extent [%d, %d)", start, end, n.Start, n.End())
		}
		if uint64(n.Start) == end {
			end = n.End()
			if err := free.Delete(k); err != nil {
				return err
			}
		}
	}
	// Previous extent.
	c = free.Cursor()
	k, v := c.Seek(extentKey(e.Start))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k != nil {
		p, err := decodeExtent(k, v)
		if err != nil {
			return err
		}
		if p.End() > start {
			return fmt.Errorf("freeing rows [%d, %d) that overlap free extent [%d, %d)", start, end, p.Start, p.End())
		}
		if p.End() == start {
			start = uint64(p.Start)
			if err := free.Delete(k); err != nil {
				return err
			}
		}
	}
	if end == uint64(hwm) {
		return meta.Put(keyHWM, binary.LittleEndian.AppendUint32(nil, uint32(start)))
	}
	return free.Put(extentKey(uint32(start)), encodeExtentValue(uint32(end-start)))
}
