//go:build !linux

package store

import "os"

// flushRange is a no-op where sync_file_range does not exist: a large
// write's pages then wait for its fsync.
func flushRange(f *os.File, off, n int64) bool { return false }
