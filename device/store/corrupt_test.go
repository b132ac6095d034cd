package store

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// flipByte XORs one byte of a channel file.
func flipByte(t *testing.T, dir string, ch int, off int64) {
	t.Helper()
	f, err := os.OpenFile(channelPath(dir, ch), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// checkAllLimbs verifies every limb of version v of name except skip.
func checkAllLimbs(t *testing.T, s *Store, name string, v uint64, skipPoly, skipLimb int) {
	t.Helper()
	sh := shapeFor(v)
	want := content(name, v, sh)
	for poly := 0; poly < sh.Polys; poly++ {
		for limb := 0; limb < sh.Limbs; limb++ {
			if poly == skipPoly && limb == skipLimb {
				continue
			}
			b, err := s.ReadLimb(name, poly, limb)
			if err != nil {
				t.Fatalf("%s limb (%d,%d): %v", name, poly, limb, err)
			}
			if string(b) != string(want[poly*sh.Limbs+limb]) {
				t.Fatalf("%s limb (%d,%d) differs", name, poly, limb)
			}
		}
	}
}

// TestCorruptPage flips one byte of one page (data, then spare area) and
// expects the named checksum error for exactly that limb, with everything
// else intact; rewriting the object recovers it.
func TestCorruptPage(t *testing.T) {
	const vA, vB = 71, 22 // shapes 3×4×416 B (7 pages per limb) and 2×4×64 B (1 page)
	for _, where := range []struct {
		name   string
		off    int // byte within the slot
		reason string
	}{
		{"data", 17, "CRC-32C mismatch"},
		{"spare-crc", 64 + 1, "CRC-32C mismatch"},
		{"spare-generation", 64 + 5, "CRC-32C mismatch"},
	} {
		t.Run(where.name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			defer s.Close()
			mustPut(t, s, "a", vA)
			mustPut(t, s, "b", vB)
			info, err := s.Stat("a")
			if err != nil {
				t.Fatal(err)
			}
			const poly, limb, page = 2, 1, 5
			loc, err := testLayout.Locate(info.Descriptor, poly, limb, page)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, dir, loc.Channel, int64(loc.Row)*slotSize(testLayout)+int64(where.off))

			_, err = s.ReadLimb("a", poly, limb)
			var ce *CorruptPageError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("ReadLimb of corrupted limb: %v, want *CorruptPageError", err)
			}
			if ce.Object != "a" || ce.Poly != poly || ce.Limb != limb || ce.Page != page ||
				ce.Channel != loc.Channel || ce.Row != loc.Row || ce.Generation != info.Generation {
				t.Fatalf("error names %+v, want object a poly %d limb %d page %d at %+v", ce, poly, limb, page, loc)
			}
			msg := err.Error()
			for _, want := range []string{`object "a"`, "limb 1", "page 5", where.reason} {
				if !strings.Contains(msg, want) {
					t.Fatalf("error %q does not contain %q", msg, want)
				}
			}
			// The whole-object read names the same page.
			if _, _, err := s.Get("a"); !errors.As(err, &ce) || ce.Poly != poly || ce.Limb != limb || ce.Page != page ||
				ce.Channel != loc.Channel || ce.Row != loc.Row {
				t.Fatalf("Get of corrupted object: %v, want poly %d limb %d page %d at %+v", err, poly, limb, page, loc)
			}
			checkAllLimbs(t, s, "a", vA, poly, limb)
			checkAllLimbs(t, s, "b", vB, -1, -1)

			// Reopening does not hide or spread the damage.
			s.Close()
			s = mustOpen(t, dir)
			if _, err := s.ReadLimb("a", poly, limb); !errors.As(err, &ce) {
				t.Fatalf("after reopen: %v", err)
			}
			// A new generation is written elsewhere and reads back intact.
			mustPut(t, s, "a", vA)
			checkAllLimbs(t, s, "a", vA, -1, -1)
		})
	}
}

// TestMisplacedAndMissingPages: a page copied from another object (valid
// checksum, wrong identity) and a truncated channel file are both detected.
func TestMisplacedAndMissingPages(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	mustPut(t, s, "a", 4)
	mustPut(t, s, "b", 4)
	ia, _ := s.Stat("a")
	ib, _ := s.Stat("b")
	la, _ := testLayout.Locate(ia.Descriptor, 0, 0, 0)
	lb, _ := testLayout.Locate(ib.Descriptor, 0, 0, 0)
	ss := slotSize(testLayout)
	src, err := os.ReadFile(channelPath(dir, lb.Channel))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(channelPath(dir, la.Channel), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(src[int64(lb.Row)*ss:int64(lb.Row+1)*ss], int64(la.Row)*ss); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = s.ReadLimb("a", 0, 0)
	var ce *CorruptPageError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "generation") || ce.Page != 0 {
		t.Fatalf("misplaced page: %v, want a generation mismatch on page 0", err)
	}
	// Truncate the channel holding b's last page.
	sh := shapeFor(4)
	k := testLayout.PagesPerLimb(sh)
	last, _ := testLayout.Locate(ib.Descriptor, sh.Polys-1, sh.Limbs-1, k-1)
	if err := os.Truncate(channelPath(dir, last.Channel), int64(last.Row)*ss+10); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReadLimb("b", sh.Polys-1, sh.Limbs-1)
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "missing") || ce.Page != k-1 {
		t.Fatalf("truncated page: %v, want a missing-page error on page %d", err, k-1)
	}
}

// TestScanLimbChecksIdentityNotPayload: ScanLimb hands on a page whose
// payload was altered (its reader authenticates the data end to end) but
// refuses one whose generation field was altered; VisitLimb refuses both.
func TestScanLimbChecksIdentityNotPayload(t *testing.T) {
	const vA = 71 // 3×4×416 B: 7 pages per limb
	for _, where := range []struct {
		name       string
		off        int
		scanRefuse bool
	}{
		{"payload", 17, false},
		{"generation", 64 + 5, true},
	} {
		t.Run(where.name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			defer s.Close()
			mustPut(t, s, "a", vA)
			info, err := s.Stat("a")
			if err != nil {
				t.Fatal(err)
			}
			const poly, limb, page = 2, 1, 5
			loc, err := testLayout.Locate(info.Descriptor, poly, limb, page)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, dir, loc.Channel, int64(loc.Row)*slotSize(testLayout)+int64(where.off))
			o, err := s.Acquire("a")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Release()
			sh := shapeFor(vA)
			want := content("a", vA, sh)[poly*sh.Limbs+limb]
			got := make([]byte, len(want))
			var mu sync.Mutex
			err = o.ScanLimb(poly, limb, func(off int, b []byte) { mu.Lock(); copy(got[off:], b); mu.Unlock() })
			var ce *CorruptPageError
			if where.scanRefuse {
				if !errors.As(err, &ce) || ce.Page != page {
					t.Fatalf("ScanLimb of a page of another generation: %v, want a CorruptPageError for page %d", err, page)
				}
			} else {
				if err != nil {
					t.Fatalf("ScanLimb: %v", err)
				}
				diff := 0
				for i := range got {
					if got[i] != want[i] {
						diff++
					}
				}
				if diff != 1 {
					t.Fatalf("ScanLimb returned %d altered bytes, want the 1 flipped", diff)
				}
			}
			if err := o.VisitLimb(poly, limb, func(int, []byte) {}); !errors.As(err, &ce) {
				t.Fatalf("VisitLimb: %v, want a CorruptPageError", err)
			}
		})
	}
}
