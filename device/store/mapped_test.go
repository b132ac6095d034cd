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
func TestScanOfTruncatedFileIsNamedError(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	// Objects of many pages, so the last ones lie well past the first
	// memory page of each channel file.
	for v := uint64(0); v < 12; v++ {
		mustPut(t, s, fmt.Sprintf("obj%02d", v), 3+12*5) // 416-byte limbs of 7 pages
	}
	last := fmt.Sprintf("obj%02d", 11)
	if _, err := scanAll(s, last); err != nil {
		t.Fatalf("scan before the cut: %v", err)
	}
	for ch := 0; ch < testLayout.Channels; ch++ {
		if err := os.Truncate(channelPath(dir, ch), 0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := scanAll(s, last)
	var cpe *CorruptPageError
	if !errors.As(err, &cpe) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("scan of a cut file: %v, want a CorruptPageError", err)
	}
	if !strings.Contains(cpe.Reason, "unreadable") {
		t.Errorf("reason %q: the scan did not fault on the kept mapping", cpe.Reason)
	}
	if cpe.Object != last {
		t.Errorf("error names object %q, want %q", cpe.Object, last)
	}
}
