package bench

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The cached read covers every byte of every file once per pass, whatever
// the split over threads (sizes not multiples of the request or of the
// thread count), and says so; a missing file or a file cut short is an
// error, not a figure.
func TestReadFilesCachedReadsEveryByte(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{1, cachedReadBlock - 3, 3*cachedReadBlock + 777}
	var total int64
	for i, n := range sizes {
		if err := os.WriteFile(filepath.Join(dir, "ch0"+string(rune('0'+i))), make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
		total += int64(n)
	}
	if err := os.WriteFile(filepath.Join(dir, "other"), make([]byte, 99), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2, 3, 7} {
		r, err := ReadFilesCached(dir, "ch*", threads, 2)
		if err != nil {
			t.Fatal(err)
		}
		if r.Bytes != total || r.Seconds <= 0 || r.GBps <= 0 || r.Direct {
			t.Fatalf("%d threads: %+v, want %d bytes through the cache", threads, r, total)
		}
	}
	if _, err := ReadFilesCached(dir, "none*", 2, 1); err == nil {
		t.Fatal("no files matched, no error")
	}
	// A file that shrinks between its stat and its read.
	if _, err := readShares([]*os.File{mustOpen(t, filepath.Join(dir, "ch02"))}, []int64{int64(sizes[2]) + 10}, 2); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a short file read as %v, want io.ErrUnexpectedEOF", err)
	}
}

func mustOpen(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// ReadFilesParallel reads every byte of every matching file — block-sized
// files and one with an unaligned tail — with parts × files requests in
// flight.
func TestReadFilesParallelReadsEveryByte(t *testing.T) {
	dir := t.TempDir()
	sizes := map[string]int{"ch00": 3 * rawReadBlock, "ch01": 2*rawReadBlock + 4096 + 17, "ch02": 100, "other": 1 << 20}
	want := int64(0)
	for name, n := range sizes {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != "other" {
			want += int64(n)
		}
	}
	r, err := ReadFilesParallel(dir, "ch*", 2)
	if err != nil {
		t.Fatal(err)
	}
	// ch00 (3 blocks): parts of 2 blocks and 1; ch01: 2 parts; ch02: 1.
	if r.Bytes != want || r.InFlight != 5 {
		t.Fatalf("read %d bytes in %d parts, want %d bytes in 5", r.Bytes, r.InFlight, want)
	}
	if _, err := ReadFilesParallel(dir, "nothing*", 2); err == nil {
		t.Fatal("a read of no files is no baseline")
	}
}
