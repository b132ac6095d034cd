package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dropPageCache asks the kernel to drop the store's files from the page
// cache (posix_fadvise DONTNEED on each channel file; no root needed), so
// the next read of them comes from the disk.
func dropPageCache(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "ch*"))
	if err != nil {
		return err
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		f.Sync()
		err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// cachedBytes is how many bytes of the store's channel files are in the
// page cache (mincore over a mapping of each; a page mapped by another
// process — a device's kept mappings, which dropPageCache cannot evict —
// counts as cached) and the files' total.
func cachedBytes(dir string) (cached, total int64, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "ch*"))
	if err != nil {
		return 0, 0, err
	}
	pg := int64(os.Getpagesize())
	for _, name := range files {
		c, n, err := fileCachedBytes(name, pg)
		if err != nil {
			return 0, 0, err
		}
		cached += c
		total += n
	}
	return cached, total, nil
}

func fileCachedBytes(name string, pg int64) (int64, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0, 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: map %s: %w", name, err)
	}
	defer unix.Munmap(m)
	pages := (fi.Size() + pg - 1) / pg
	vec := make([]byte, pages)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, 0, fmt.Errorf("bench: mincore %s: %w", name, e)
	}
	var cached int64
	for i, v := range vec {
		if v&1 != 0 {
			cached += min(pg, fi.Size()-int64(i)*pg)
		}
	}
	return cached, fi.Size(), nil
}
