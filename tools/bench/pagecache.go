package bench

import (
	"os"
	"path/filepath"

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
