package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"
	"unsafe"
)

// RawRead is a plain sequential read of files: the baseline a scan over
// the same files is compared with.
type RawRead struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	GBps    float64 `json:"gbps"`
	// Direct: the files were read with O_DIRECT (bypassing the page cache,
	// a cold read); otherwise through the page cache (warm if cached).
	Direct bool `json:"direct"`
}

// rawReadBlock is the size of one read request.
const rawReadBlock = 4 << 20

// ReadFiles reads every regular file matching pattern in dir, one after
// another from start to end in rawReadBlock requests, with O_DIRECT where
// the file system allows it.
func ReadFiles(dir, pattern string) (RawRead, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return RawRead{}, err
	}
	if len(names) == 0 {
		return RawRead{}, fmt.Errorf("bench: no files %s in %s", pattern, dir)
	}
	sort.Strings(names)
	buf := alignedBuffer(rawReadBlock, 4096)
	res := RawRead{Direct: true}
	start := time.Now()
	for _, name := range names {
		n, direct, err := readFile(name, buf)
		if err != nil {
			return RawRead{}, err
		}
		res.Bytes += n
		res.Direct = res.Direct && direct
	}
	res.Seconds = time.Since(start).Seconds()
	if res.Seconds > 0 {
		res.GBps = float64(res.Bytes) / res.Seconds / 1e9
	}
	return res, nil
}

func readFile(name string, buf []byte) (int64, bool, error) {
	direct := true
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		direct = false
		if f, err = os.Open(name); err != nil {
			return 0, false, fmt.Errorf("bench: %w", err)
		}
	}
	defer f.Close()
	var total int64
	for {
		n, err := f.Read(buf)
		total += int64(n)
		if err == io.EOF || (err == nil && n == 0) {
			return total, direct, nil
		}
		if err != nil {
			// O_DIRECT refuses the unaligned tail of a file: read it
			// through the cache.
			if direct && n == 0 {
				g, gerr := os.Open(name)
				if gerr != nil {
					return total, direct, fmt.Errorf("bench: %w", gerr)
				}
				rest, rerr := io.Copy(io.Discard, io.NewSectionReader(g, total, 1<<62))
				g.Close()
				return total + rest, direct, rerr
			}
			return total, direct, fmt.Errorf("bench: read %s: %w", name, err)
		}
	}
}

// alignedBuffer returns n bytes aligned to align (O_DIRECT needs it).
func alignedBuffer(n, align int) []byte {
	b := make([]byte, n+align)
	off := int(uintptr(unsafe.Pointer(&b[0])) & uintptr(align-1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}
