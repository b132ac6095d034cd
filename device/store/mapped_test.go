package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// scanAll scans every limb of name with ScanLimb into fresh buffers.
func scanAll(s *Store, name string) ([][]byte, error) {
	o, err := s.Acquire(name)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	sh := o.Info().Shape
	out := make([][]byte, sh.NumLimbs())
	for poly := 0; poly < sh.Polys; poly++ {
		for limb := 0; limb < sh.Limbs; limb++ {
			buf := make([]byte, sh.LimbBytes())
			if err := o.ScanLimb(poly, limb, func(off int, b []byte) { copy(buf[off:], b) }); err != nil {
				return nil, err
			}
			out[poly*sh.Limbs+limb] = buf
		}
	}
	return out, nil
}

// TestScanThroughKeptMappings: scans read through mappings kept across
// scans, mapped again as the files grow; every object scans back exactly
// what was put, whichever mapping was current when it was written, and a
// retired mapping still serves the scan that holds it.
func TestScanThroughKeptMappings(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	for v := uint64(0); v < 24; v++ {
		name := fmt.Sprintf("obj%02d", v%8)
		mustPut(t, s, name, v)
		// Every object now, the new one included: its rows may lie past
		// the mappings the earlier scans made.
		for w := v - min(v, 7); w <= v; w++ {
			name := fmt.Sprintf("obj%02d", w%8)
			got, err := scanAll(s, name)
			if err != nil {
				t.Fatalf("scan %s (v%d): %v", name, w, err)
			}
			want := content(name, w, shapeFor(w))
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("scan %s (v%d) limb %d differs from what was put", name, w, i)
				}
			}
		}
	}
	s.maps.mu.Lock()
	mapped := 0
	for _, c := range s.maps.cur {
		if c != nil {
			mapped++
			if c.refs != 0 {
				t.Errorf("a mapping holds %d references after every scan ended", c.refs)
			}
		}
	}
	off := s.maps.off
	s.maps.mu.Unlock()
	if off || mapped != testLayout.Channels {
		t.Fatalf("%d of %d channels mapped (mapping off: %v): the scans did not use mappings", mapped, testLayout.Channels, off)
	}
}

// TestScanOfTruncatedFileIsNamedError: a channel file cut short under a
// kept mapping (by something other than the store) makes the scan's page
// access fault; the scan returns a CorruptPageError, the process goes on.
// A limb whose first page is not cached is read instead of mapped, and a
// file cut before it is named as a missing page.
func TestScanOfTruncatedFileIsNamedError(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	// One limb of 64 KiB: on each channel a run of about 27 KiB of slots,
	// several memory pages.
	sh := Shape{Polys: 1, Limbs: 1, LogN: 13, WordSize: 8}
	if _, err := s.Put("big", KindCiphertext, sh, content("big", 1, sh)); err != nil {
		t.Fatal(err)
	}
	if _, err := scanAll(s, "big"); err != nil {
		t.Fatalf("scan before the cut: %v", err)
	}
	o, err := s.Acquire("big")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.lay.LimbRuns(o.rec.desc, 0, 0)
	o.Release()
	if err != nil {
		t.Fatal(err)
	}
	// Keep the memory page holding each run's first slot (still cached
	// and mapped), cut everything after it.
	pg := int64(os.Getpagesize())
	ss := slotSize(s.lay)
	for _, r := range runs {
		keep := (int64(r.Row)*ss/pg + 1) * pg
		if keep >= int64(r.Row+uint32(r.Count))*ss {
			t.Fatalf("run on ch%02d fits one memory page: the test needs more", r.Channel)
		}
		if err := os.Truncate(channelPath(dir, r.Channel), keep); err != nil {
			t.Fatal(err)
		}
	}
	_, err = scanAll(s, "big")
	var cpe *CorruptPageError
	if !errors.As(err, &cpe) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("scan of a cut file: %v, want a CorruptPageError", err)
	}
	if !strings.Contains(cpe.Reason, "unreadable") || cpe.Object != "big" {
		t.Fatalf("error %v: the scan did not fault on the kept mapping", err)
	}
	// Cut to nothing: the first page is not cached, the limb is read.
	for _, r := range runs {
		if err := os.Truncate(channelPath(dir, r.Channel), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err = scanAll(s, "big"); !errors.As(err, &cpe) || !strings.Contains(cpe.Reason, "missing") {
		t.Fatalf("scan of an emptied file: %v, want a missing page", err)
	}
}

// TestMappedLimbPages: an object's limbs read in place, page by page in
// any order, are what was put; pages of objects written after the mapping
// was made are reached too (the mapping grows), and the handle's mappings
// outlive a longer mapping made meanwhile.
func TestMappedLimbPages(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	var held []*Mapped
	defer func() {
		for _, m := range held {
			m.Release()
		}
	}()
	for v := uint64(0); v < 16; v++ {
		name := fmt.Sprintf("obj%02d", v)
		mustPut(t, s, name, v)
		o, err := s.Acquire(name)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Release()
		m, err := o.Map()
		if err != nil {
			t.Fatalf("Map %s: %v", name, err)
		}
		held = append(held, m)
		sh := shapeFor(v)
		want := content(name, v, sh)
		// Limbs in reverse order: any order works.
		for i := sh.NumLimbs() - 1; i >= 0; i-- {
			pages, err := m.LimbPages(i/sh.Limbs, i%sh.Limbs)
			if err != nil {
				t.Fatalf("%s limb %d: %v", name, i, err)
			}
			if got := bytes.Join(pages, nil); !bytes.Equal(got, want[i]) {
				t.Fatalf("%s limb %d read in place differs from what was put", name, i)
			}
		}
	}
	// The first handle still reads its object after later ones remapped.
	pages, err := held[0].LimbPages(0, 0)
	if err != nil || !bytes.Equal(bytes.Join(pages, nil), content("obj00", 0, shapeFor(0))[0]) {
		t.Fatalf("the first handle after remaps: %v", err)
	}
}

// TestMappedChecksPageIdentity: a page of another generation in an
// object's place is a CorruptPageError naming it.
func TestMappedChecksPageIdentity(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	mustPut(t, s, "a", 7)
	o, err := s.Acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	// Overwrite the generation in the spare area of the object's first
	// page (channel file row of page 0 of limb 0).
	runs, err := s.lay.LimbRuns(o.rec.desc, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ss := slotSize(s.lay)
	f, err := os.OpenFile(channelPath(dir, runs[0].Channel), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xEE}, int64(runs[0].Row)*ss+int64(s.lay.PageSize)+4); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m, err := o.Map()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	_, err = m.LimbPages(0, 0)
	var cpe *CorruptPageError
	if !errors.As(err, &cpe) || cpe.Object != "a" || cpe.Page != runs[0].FirstPage {
		t.Fatalf("LimbPages over a page of another generation: %v, want a CorruptPageError for page %d", err, runs[0].FirstPage)
	}
}
