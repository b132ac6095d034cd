package store

import (
	"bytes"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// seedRecord encodes generation 2 of a 2×3×128 B object (2 rows per part
// under testLayout) with parts at rows base0 and base1.
func seedRecord(t testing.TB, base0, base1 uint32) []byte {
	d, err := testLayout.NewDescriptor(Shape{Polys: 2, Limbs: 3, LogN: 4, WordSize: 8}, [2]uint32{base0, base1}, uint8(KindCiphertext))
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeRecord(record{gen: 2, desc: d})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeRecord: catalog records never panic the decoder, and what
// decodes re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(seedRecord(f, 0, 6))
	f.Add(make([]byte, recordSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		out, err := encodeRecord(r)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("record % x re-encodes to % x, %v", b, out, err)
		}
		if r.gen == 0 {
			t.Fatal("decoded generation 0")
		}
	})
}

// FuzzDecodeExtent: free-list entries decode to non-empty extents inside the
// 2^32-row address space, or fail.
func FuzzDecodeExtent(f *testing.F) {
	f.Add([]byte{0, 0, 0, 5}, []byte{3, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, []byte{1, 0, 0, 0})
	f.Add([]byte{0, 0, 0}, []byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		e, err := decodeExtent(k, v)
		if err != nil {
			return
		}
		if e.Rows == 0 || e.End() > 1<<32-1 {
			t.Fatalf("decoded bad extent %+v", e)
		}
		if !bytes.Equal(extentKey(e.Start), k) || !bytes.Equal(encodeExtentValue(e.Rows), v) {
			t.Fatalf("extent %+v does not re-encode to % x / % x", e, k, v)
		}
	})
}

// FuzzOpenCatalog replaces one object record, one free-list entry and the
// hwm of a real catalog with fuzzed bytes: Open must either fail with an
// error or yield a store whose objects all read back (no panic, no
// overlapping extents accepted).
func FuzzOpenCatalog(f *testing.F) {
	// "keep" occupies row 0, so this catalog is consistent: fuzzed object at
	// rows [1,3) and [4,6), row 3 free, hwm 6.
	f.Add(seedRecord(f, 1, 4), []byte{0, 0, 0, 3}, []byte{1, 0, 0, 0}, []byte{6, 0, 0, 0})
	f.Add(seedRecord(f, 1, 4), []byte{0, 0, 0, 40}, []byte{2, 0, 0, 0}, []byte{60, 0, 0, 0})
	f.Add(seedRecord(f, 0, 6), []byte{0, 0, 0, 0}, []byte{2, 0, 0, 0}, []byte{60, 0, 0, 0})
	f.Add([]byte{1}, []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, rec, freeKey, freeVal, hwm []byte) {
		dir := t.TempDir()
		if err := writeFuzzedCatalog(t, dir, rec, freeKey, freeVal, hwm); err != nil {
			return // bbolt rejected the key (e.g. empty); nothing to test
		}
		s, err := Open(dir, testLayout)
		if err != nil {
			return
		}
		defer s.Close()
		list, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		// If Open accepted the catalog, the extents tile the rows: the kept
		// object is intact and the fuzzed one, if any, reads without panic.
		if err := checkContent(s, "keep", 3); err != nil {
			t.Fatalf("Open accepted a catalog that damages %q: %v (objects %v)", "keep", err, list)
		}
		for _, in := range list {
			if in.Name == "fuzzed" {
				// Its pages were never written: every read must fail verification.
				if _, _, err := s.Get("fuzzed"); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("reading a never-written object: %v, want ErrCorrupt", err)
				}
			}
		}
	})
}

// TestFuzzSeedOpens makes sure the consistent seed of FuzzOpenCatalog really
// opens (otherwise the fuzz target would only ever test rejection).
func TestFuzzSeedOpens(t *testing.T) {
	dir := t.TempDir()
	if err := writeFuzzedCatalog(t, dir, seedRecord(t, 1, 4), []byte{0, 0, 0, 3}, []byte{1, 0, 0, 0}, []byte{6, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	defer s.Close()
	if _, _, err := s.Get("fuzzed"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get(fuzzed) = %v, want ErrCorrupt", err)
	}
	if err := checkContent(s, "keep", 3); err != nil {
		t.Fatal(err)
	}
}

// writeFuzzedCatalog seeds a store in dir (seedCatalog), then writes into
// its catalog an object "fuzzed" with record rec, a free-list entry freeKey
// → freeVal (none if freeKey is empty) and the high-water mark hwm. The
// error is bbolt's refusal of one of them.
func writeFuzzedCatalog(t *testing.T, dir string, rec, freeKey, freeVal, hwm []byte) error {
	t.Helper()
	seedCatalog(t, dir)
	db, err := bolt.Open(dir+"/"+CatalogFile, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketObjects).Put([]byte("fuzzed"), rec); err != nil {
			return err
		}
		if len(freeKey) > 0 {
			if err := tx.Bucket(bucketFree).Put(freeKey, freeVal); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyHWM, hwm)
	})
}

// seedCatalog leaves a store whose object "keep" (generation 1) occupies row
// 0, with hwm 1 and last generation 2 (a put and delete of "tmp").
func seedCatalog(t *testing.T, dir string) {
	s := mustOpen(t, dir)
	mustPut(t, s, "keep", 3)
	mustPut(t, s, "tmp", 3)
	if err := s.Delete("tmp"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
