//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// flushRange writes f's dirty pages in [off, off+n) to the disk and waits
// for them (sync_file_range: data only, no metadata, no disk-cache flush,
// so it is not durability; the writer's fsync after it is). Its errors are
// the fsync's to report.
func flushRange(f *os.File, off, n int64) bool {
	const flags = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	return unix.SyncFileRange(int(f.Fd()), off, n, flags) == nil
}
