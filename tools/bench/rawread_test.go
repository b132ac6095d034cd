package bench

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
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

// ReadFilesDirect hands over exactly the files' bytes — every byte once, at
// its offset, nothing of the files the pattern leaves out — whatever the
// readers a file and the requests in flight a reader, files of whole
// blocks, with an unaligned tail, and shorter than one block among them;
// InFlight counts the requests it kept going.
func TestReadFilesDirectReadsExactlyTheFiles(t *testing.T) {
	dir := t.TempDir()
	const block = 64 << 10
	sizes := map[string]int{"ch00": 7 * block, "ch01": 5*block + 4096 + 17, "ch02": 100, "other": 3 * block}
	want := map[string][]byte{}
	for name, n := range sizes {
		b := make([]byte, n)
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if name != "other" {
			want[filepath.Join(dir, name)] = b
		}
	}
	for _, c := range []struct {
		cfg      RawConfig
		inFlight int
	}{
		// ch00: parts of 7 blocks / readers (whole blocks); ch01: 6
		// blocks with its tail; ch02: 1 block. In flight: Σ over parts of
		// min(depth, the part's blocks).
		{RawConfig{Readers: 1, Depth: 1, Block: block}, 3},
		{RawConfig{Readers: 2, Depth: 1, Block: block}, 5},
		{RawConfig{Readers: 1, Depth: 4, Block: block}, 4 + 4 + 1},
		{RawConfig{Readers: 3, Depth: 8, Block: block}, (3 + 3 + 1) + (2 + 2 + 2) + 1},
		{RawConfig{Readers: 2, Depth: 2, Block: block, Buffered: true}, (2 + 2) + (2 + 2) + 1},
	} {
		var mu sync.Mutex
		got := map[string][]byte{}
		seen := map[string][]int{}
		r, err := readFilesDirect(dir, "ch*", c.cfg, func(name string, off int64, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			if got[name] == nil {
				got[name] = make([]byte, sizes[filepath.Base(name)])
				seen[name] = make([]int, sizes[filepath.Base(name)])
			}
			copy(got[name][off:], b)
			for i := range b {
				seen[name][int(off)+i]++
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for name, b := range want {
			total += int64(len(b))
			if !bytes.Equal(got[name], b) {
				t.Fatalf("%+v: %s read differs from the file", c.cfg, name)
			}
			for off, k := range seen[name] {
				if k != 1 {
					t.Fatalf("%+v: %s byte %d read %d times", c.cfg, name, off, k)
				}
			}
		}
		if c.cfg.Buffered && r.Direct {
			t.Fatalf("%+v: a buffered pass reported O_DIRECT", c.cfg)
		}
		if len(got) != len(want) || r.Bytes != total || r.InFlight != c.inFlight || *r.Config != c.cfg {
			t.Fatalf("%+v: read %d files, %d bytes, %d in flight, config %+v; want %d files, %d bytes, %d in flight",
				c.cfg, len(got), r.Bytes, r.InFlight, *r.Config, len(want), total, c.inFlight)
		}
	}
	// The sweep evicts before every pass and returns the fastest of them.
	evictions := 0
	best, all, err := RawReadSweep(dir, "ch*", []RawConfig{{Readers: 1, Depth: 1, Block: block}, {Readers: 2, Depth: 4, Block: block, Buffered: true}}, func() error { evictions++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if evictions != 2 || len(all) != 2 || best.GBps != max(all[0].GBps, all[1].GBps) || best.Bytes != all[1].Bytes {
		t.Fatalf("sweep: %d evictions, %d passes, best %+v of %+v", evictions, len(all), best, all)
	}
}
