package store

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
	bolt "go.etcd.io/bbolt"
)

// TestFreeListAgainstBitmap drives the catalog's allocator (allocator.alloc,
// takeRows, releaseRows) with a deterministic random sequence and compares
// the free list and hwm after every step with a brute-force bitmap of used
// rows.
func TestFreeListAgainstBitmap(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.NoSync = true // the test checks logic, not durability
	err = db.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketFree); err != nil {
			return err
		}
		return m.Put(keyHWM, binary.LittleEndian.AppendUint32(nil, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := newStream([]byte("free list"), "")
	used := make([]bool, 0) // used[r] for rows below hwm
	var live []layout.Extent
	for step := 0; step < 2000; step++ {
		err := db.Update(func(tx *bolt.Tx) error {
			if len(live) == 0 || rng.intn(3) > 0 { // allocate
				a := allocator{}
				hwm, _ := decodeUint32("hwm", tx.Bucket(bucketMeta).Get(keyHWM))
				a.hwm = uint64(hwm)
				tx.Bucket(bucketFree).ForEach(func(k, v []byte) error {
					e, err := decodeExtent(k, v)
					a.free = append(a.free, e)
					return err
				})
				rows := 1 + rng.intn(9)
				before := slices.Clone(a.free)
				start, err := a.alloc(int64(rows))
				if err != nil {
					return err
				}
				if err := takeRows(tx, start, uint32(rows)); err != nil {
					return err
				}
				for r := start; r < start+uint32(rows); r++ {
					for int(r) >= len(used) {
						used = append(used, false)
					}
					if used[r] {
						t.Fatalf("step %d: row %d allocated twice", step, r)
					}
					used[r] = true
				}
				// First fit: no free extent below start could have held it.
				for _, e := range before {
					if e.Start < start && e.Rows >= uint32(rows) {
						t.Fatalf("step %d: %d rows placed at %d, but free extent %+v fits first", step, rows, start, e)
					}
				}
				live = append(live, layout.Extent{Start: start, Rows: uint32(rows)})
				return nil
			}
			i := rng.intn(len(live))
			e := live[i]
			live = append(live[:i], live[i+1:]...)
			for r := e.Start; r < e.Start+e.Rows; r++ {
				used[r] = false
			}
			return releaseRows(tx, e)
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		// Compare with the bitmap.
		for len(used) > 0 && !used[len(used)-1] {
			used = used[:len(used)-1]
		}
		db.View(func(tx *bolt.Tx) error {
			hwm, _ := decodeUint32("hwm", tx.Bucket(bucketMeta).Get(keyHWM))
			if int(hwm) != len(used) {
				t.Fatalf("step %d: hwm %d, bitmap says %d", step, hwm, len(used))
			}
			var want []layout.Extent // maximal free runs below hwm
			for r := 0; r < len(used); r++ {
				if used[r] {
					continue
				}
				if n := len(want); n > 0 && want[n-1].End() == uint64(r) {
					want[n-1].Rows++
				} else {
					want = append(want, layout.Extent{Start: uint32(r), Rows: 1})
				}
			}
			var got []layout.Extent
			tx.Bucket(bucketFree).ForEach(func(k, v []byte) error {
				e, err := decodeExtent(k, v)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, e)
				return nil
			})
			if len(got) != len(want) {
				t.Fatalf("step %d: free list %v, want %v", step, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("step %d: free list %v, want %v", step, got, want)
				}
			}
			return nil
		})
	}
	if len(live) == 0 {
		t.Fatal("sequence ended empty: nothing exercised")
	}
}

// TestTakeRowsRejectsUsedRows: catalog edits refuse rows that are not free.
func TestTakeRowsRejectsUsedRows(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		m, _ := tx.CreateBucket(bucketMeta)
		f, _ := tx.CreateBucket(bucketFree)
		m.Put(keyHWM, binary.LittleEndian.AppendUint32(nil, 20))
		return f.Put(extentKey(5), encodeExtentValue(5)) // rows [5,10) free
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]uint32{{0, 1}, {4, 2}, {8, 3}, {12, 1}, {21, 1}} {
		err := db.Update(func(tx *bolt.Tx) error { return takeRows(tx, c[0], c[1]) })
		if err == nil {
			t.Errorf("takeRows(%d, %d) accepted used rows", c[0], c[1])
		}
	}
	for _, e := range []layout.Extent{{Start: 4, Rows: 2}, {Start: 9, Rows: 1}, {Start: 18, Rows: 3}} {
		err := db.Update(func(tx *bolt.Tx) error { return releaseRows(tx, e) })
		if err == nil {
			t.Errorf("releaseRows(%+v) accepted rows that are free or above hwm", e)
		}
	}
}
