//go:build linux

package store

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPopulate: Populate leaves every page of an object whose files were
// dropped from the page cache cached (where the kernel has
// MADV_POPULATE_READ and the file system drops pages), the object scans
// back what was put, and a file cut short under the mapping makes
// Populate return (the system call's error is not a fault) and the scan
// name the page.
func TestPopulate(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	sh := Shape{Polys: 2, Limbs: 3, LogN: 13, WordSize: 8}
	want := content("big", 1, sh)
	if _, err := s.Put("big", KindCiphertext, sh, want); err != nil {
		t.Fatal(err)
	}
	for ch := range s.files {
		if err := unix.Fadvise(int(s.files[ch].Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
	}
	o, err := s.Acquire("big")
	if err != nil {
		t.Fatal(err)
	}
	o.Populate()
	// Every page of the object's rows on every channel is now cached.
	d, ss := o.rec.desc, slotSize(s.lay)
	rows := s.lay.PartRows(d.Shape())
	for p := range rows {
		if rows[p] == 0 {
			continue
		}
		start, end := int64(d.Base[p])*ss, (int64(d.Base[p])+rows[p])*ss
		for ch := range s.files {
			c, _, err := s.acquireMap(ch, end)
			if err != nil || c == nil {
				t.Fatalf("map ch%02d: %v", ch, err)
			}
			pg := int64(os.Getpagesize())
			for off := start - start%pg; off < end; off += pg {
				if resident(c.data, off) {
					continue
				}
				// Not cached: a failure unless this kernel cannot
				// populate (Populate then only advised readahead).
				if waited, err := populate(c.data, off, off+pg); err != nil || waited {
					t.Fatalf("ch%02d: page at %d not cached after Populate (populate: %v)", ch, off, err)
				}
				break
			}
			s.releaseMap(c)
		}
	}
	o.Release()
	got, err := scanAll(s, "big")
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("limb %d differs from what was put after Populate", i)
		}
	}
	// Cut every channel to its first memory page under the mappings.
	pg := int64(os.Getpagesize())
	for ch := range s.files {
		if err := os.Truncate(channelPath(dir, ch), pg); err != nil {
			t.Fatal(err)
		}
	}
	if o, err = s.Acquire("big"); err != nil {
		t.Fatal(err)
	}
	o.Populate() // returns: no fault
	o.Release()
	var cpe *CorruptPageError
	if _, err := scanAll(s, "big"); !errors.As(err, &cpe) {
		t.Fatalf("scan of cut files after Populate: %v, want a CorruptPageError", err)
	}
}
