//go:build linux

package store

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errMapUnsupported: the file is too large to map here (32-bit).
var errMapUnsupported = errors.New("mapping unsupported")

// mapFile maps the first size bytes of f read-only and shared (the page
// cache itself, no copy).
func mapFile(f *os.File, size int64) ([]byte, error) {
	if int64(int(size)) != size {
		return nil, errMapUnsupported
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func unmapFile(b []byte) { _ = unix.Munmap(b) }

// adviseWillNeed starts readahead of b[start:end] (widened to whole memory
// pages, as madvise requires) unless its first page is already in memory:
// on a cached store the advice would walk every page of the range for
// nothing (a 4 GiB scan asks it 1,024 times), and a range whose first page
// is cached is taken as cached.
func adviseWillNeed(b []byte, start, end int64) {
	pg := int64(os.Getpagesize())
	start -= start % pg
	end = min(end, int64(len(b)))
	if start >= end {
		return
	}
	if resident(b, start) {
		return
	}
	_ = unix.Madvise(b[start:end], unix.MADV_WILLNEED)
}

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): fault the range's
// pages in for reading, the kernel reading ahead as a fault does, and
// return when they are there.
const madvPopulateRead = 22

// populate reads b[start:end] (widened to whole memory pages) into the page
// cache and maps it, returning when it is there; where the kernel has no
// MADV_POPULATE_READ it starts readahead instead (adviseWillNeed) and
// returns at once (waited false). A range past the end of its file
// (cut short under the mapping) is an error, not a fault.
func populate(b []byte, start, end int64) (waited bool, err error) {
	pg := int64(os.Getpagesize())
	start -= start % pg
	end = min(end, int64(len(b)))
	if start >= end {
		return true, nil
	}
	if err := unix.Madvise(b[start:end], madvPopulateRead); err != unix.EINVAL {
		return true, err
	}
	return false, unix.Madvise(b[start:end], unix.MADV_WILLNEED)
}

// resident reports whether the memory page of b holding offset off is in
// the page cache (true where the system cannot say).
func resident(b []byte, off int64) bool {
	pg := int64(os.Getpagesize())
	off -= off % pg
	var vec [1]byte
	if off >= int64(len(b)) || mincore(b[off:min(off+pg, int64(len(b)))], vec[:]) != nil {
		return true
	}
	return vec[0]&1 != 0
}

// mincore reports which memory pages of b are resident (x/sys/unix has no
// Linux wrapper).
func mincore(b, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return e
	}
	return nil
}
