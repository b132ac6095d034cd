//go:build unix

package store

import (
	"errors"
	"fmt"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// channelMaps maps the channel files read-only so a scan reads pages where
// the kernel keeps them (VisitLimb), without copying them into a buffer.
// A mapping covers a file as it was when mapped; a read past it maps the
// file again (the old mapping stays valid until Close, so readers holding
// it never fault on an unmap).
type channelMaps struct {
	cur [][]byte
	old [][]byte
}

// mapped returns channel ch's mapping if it covers end bytes, mapping the
// file again when it has grown; nil when the file is shorter than end or
// cannot be mapped (the caller reads with pread instead).
func (s *Store) mapped(ch int, end int64) []byte {
	s.mmu.Lock()
	defer s.mmu.Unlock()
	if s.maps.cur == nil {
		s.maps.cur = make([][]byte, len(s.files))
	}
	// The file's size now, not when it was mapped: a file cut short
	// since is read with pread (and its missing pages reported).
	fi, err := s.files[ch].Stat()
	if err != nil || fi.Size() < end || fi.Size() > 1<<46 {
		return nil
	}
	if m := s.maps.cur[ch]; int64(len(m)) >= end {
		return m
	}
	m, err := unix.Mmap(int(s.files[ch].Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil
	}
	if old := s.maps.cur[ch]; old != nil {
		s.maps.old = append(s.maps.old, old)
	}
	s.maps.cur[ch] = m
	return m
}

// unmapAll releases every mapping (Close, with no operation running).
func (s *Store) unmapAll() error {
	s.mmu.Lock()
	defer s.mmu.Unlock()
	var errs []error
	for _, m := range append(s.maps.cur, s.maps.old...) {
		if m != nil {
			errs = append(errs, unix.Munmap(m))
		}
	}
	s.maps = channelMaps{}
	return errors.Join(errs...)
}

// faultSafe runs f and turns a fault on a mapping (a channel file cut
// short under the store, say) into an error instead of a crash.
func faultSafe(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fault reading a mapped channel file: %v", r)
		}
	}()
	return f()
}
