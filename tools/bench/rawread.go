package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
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
	// InFlight is the read requests outstanding at once (ReadFilesParallel:
	// the files at once times the streams per file).
	InFlight int `json:"in_flight,omitempty"`
	// Config is how ReadFilesDirect read (nil: ReadFilesCached).
	Config *RawConfig `json:"config,omitempty"`
}

// matchingFiles is the files matching pattern in dir, sorted; none is an
// error (a baseline of nothing is not a figure).
func matchingFiles(dir, pattern string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("bench: no files %s in %s", pattern, dir)
	}
	sort.Strings(names)
	return names, nil
}

// rawReadStreams is the parts of each file a raw read reads side by side
// (ReadFilesParallel): with a store's four channel files, eight 4 MiB
// requests in flight.
const rawReadStreams = 2

// rawReadBlock is the size of one read request.
const rawReadBlock = 4 << 20

// RawConfig is how a raw read reads: each file cut into Readers contiguous
// parts, each part read by Depth goroutines taking its Block-sized
// requests in turn (Readers × Depth requests in flight a file).
type RawConfig struct {
	Readers int `json:"readers"`
	Depth   int `json:"depth"`
	Block   int `json:"block"`
	// Buffered reads through the page cache (dropped before the pass, so
	// from the disk) with the kernel reading ahead, as a scan's reads do;
	// otherwise O_DIRECT where the file system allows it.
	Buffered bool `json:"buffered,omitempty"`
}

// rawSweep is the configurations RawReadSweep tries on a store's four
// channel files: the scan's own (every channel at once, two workers: 8
// requests in flight, see device/store's ScanLimb and Prefetch) and deeper
// queues, up to 128 requests in flight, buffers at most 64 MiB in all;
// O_DIRECT, and through the page cache with the kernel's readahead (which
// a virtual disk may serve faster than direct requests: the scan's reads
// are of that kind).
var rawSweep = []RawConfig{
	{Readers: rawReadStreams, Depth: 1, Block: rawReadBlock},
	{Readers: 1, Depth: 8, Block: 1 << 20},
	{Readers: 2, Depth: 8, Block: 1 << 20},
	{Readers: 4, Depth: 8, Block: 512 << 10},
	{Readers: rawReadStreams, Depth: 1, Block: rawReadBlock, Buffered: true},
	{Readers: 4, Depth: 8, Block: 512 << 10, Buffered: true},
}

// RawReadSweep reads the files matching pattern in dir once with each of
// configs (nil: rawSweep), calling evict before each (dropping the files
// from the page cache, so no pass finds another's pages), and returns the
// fastest and every pass.
func RawReadSweep(dir, pattern string, configs []RawConfig, evict func() error) (RawRead, []RawRead, error) {
	if configs == nil {
		configs = rawSweep
	}
	var best RawRead
	var all []RawRead
	for _, c := range configs {
		if evict != nil {
			if err := evict(); err != nil {
				return RawRead{}, nil, err
			}
		}
		r, err := ReadFilesDirect(dir, pattern, c)
		if err != nil {
			return RawRead{}, nil, err
		}
		all = append(all, r)
		if r.GBps > best.GBps {
			best = r
		}
	}
	return best, all, nil
}

// ReadFilesParallel reads every file matching pattern in dir at once, each
// in perFile contiguous parts read side by side, one rawReadBlock request
// in flight a part (ReadFilesDirect with Depth 1).
func ReadFilesParallel(dir, pattern string, perFile int) (RawRead, error) {
	return ReadFilesDirect(dir, pattern, RawConfig{Readers: perFile, Depth: 1, Block: rawReadBlock})
}

// ReadFilesDirect reads every file matching pattern in dir at once, with
// O_DIRECT where the file system allows it: each file in c.Readers
// contiguous parts (whole blocks), each part by c.Depth goroutines that
// take its c.Block-sized requests in turn, so that a part is read in order
// with up to Depth requests outstanding, as readahead keeps them. A scan
// of a store reads its channel files in parallel with the kernel reading
// ahead, so a baseline of one request at a time would flatter it; InFlight
// says how many this one kept going.
func ReadFilesDirect(dir, pattern string, c RawConfig) (RawRead, error) {
	return readFilesDirect(dir, pattern, c, nil)
}

// readFilesDirect is ReadFilesDirect handing every request's bytes to
// visit (nil: none; it runs on many goroutines at once, for distinct
// ranges).
func readFilesDirect(dir, pattern string, c RawConfig, visit func(name string, off int64, b []byte)) (RawRead, error) {
	visitFor := func(name string) func(int64, []byte) {
		if visit == nil {
			return nil
		}
		return func(off int64, b []byte) { visit(name, off, b) }
	}
	names, err := matchingFiles(dir, pattern)
	if err != nil {
		return RawRead{}, err
	}
	c.Readers, c.Depth = max(1, c.Readers), max(1, c.Depth)
	if c.Block < 4096 || c.Block%4096 != 0 {
		c.Block = rawReadBlock
	}
	block := int64(c.Block)
	type part struct {
		name     string
		off, end int64
		next     atomic.Int64 // the next block's offset
	}
	var parts []*part
	inFlight := 0
	for _, name := range names {
		fi, err := os.Stat(name)
		if err != nil {
			return RawRead{}, fmt.Errorf("bench: %w", err)
		}
		step := max(block, (fi.Size()/int64(c.Readers)+block-1)/block*block)
		for off := int64(0); off < fi.Size(); off += step {
			p := &part{name: name, off: off, end: min(fi.Size(), off+step)}
			p.next.Store(off)
			parts = append(parts, p)
			inFlight += int(min(int64(c.Depth), (p.end-p.off+block-1)/block))
		}
	}
	var (
		total  atomic.Int64
		direct atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
	)
	direct.Store(true)
	start := time.Now()
	for _, p := range parts {
		for range min(int64(c.Depth), (p.end-p.off+block-1)/block) {
			wg.Go(func() {
				n, d, err := readPart(p.name, &p.next, p.end, block, c.Buffered, visitFor(p.name))
				total.Add(n)
				if !d {
					direct.Store(false)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return RawRead{}, err
	}
	res := RawRead{Bytes: total.Load(), Seconds: time.Since(start).Seconds(), Direct: direct.Load(), InFlight: inFlight, Config: &c}
	if res.Seconds > 0 {
		res.GBps = float64(res.Bytes) / res.Seconds / 1e9
	}
	return res, nil
}

// readPart reads blocks of a file up to end, taking each block's offset
// from next (shared with the part's other readers), until none is left:
// through one open file, so that buffered reads keep the kernel's
// readahead state; O_DIRECT (unless buffered) where the file system allows
// it, an unaligned tail through the cache. It reports the bytes read and
// whether every one was read with O_DIRECT.
func readPart(name string, next *atomic.Int64, end, block int64, buffered bool, visit func(off int64, b []byte)) (int64, bool, error) {
	buf := alignedBuffer(int(block), 4096)
	direct := !buffered
	var f *os.File
	var err error
	if direct {
		if f, err = os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECT, 0); err != nil {
			direct = false
		}
	}
	if !direct {
		if f, err = os.Open(name); err != nil {
			return 0, false, fmt.Errorf("bench: %w", err)
		}
	}
	defer f.Close()
	var total int64
	for {
		off := next.Add(block) - block
		if off >= end {
			return total, direct, nil
		}
		stop := min(end, off+block)
		n, err := f.ReadAt(buf[:stop-off], off)
		if n > 0 && visit != nil {
			visit(off, buf[:n])
		}
		total += int64(n)
		if err != nil && direct && n == 0 && !errors.Is(err, io.EOF) {
			// O_DIRECT refuses the unaligned tail of a file.
			rest, err := readCached(name, off, stop, buf, visit)
			total += rest
			if err != nil {
				return total, direct, err
			}
			continue
		}
		if err != nil && !(errors.Is(err, io.EOF) && off+int64(n) >= stop) {
			return total, direct, fmt.Errorf("bench: read %s: %w", name, err)
		}
		if int64(n) < stop-off {
			return total, direct, fmt.Errorf("bench: read %s: %d of %d bytes at %d", name, n, stop-off, off)
		}
	}
}

// readCached reads bytes [off, end) of a file through the page cache in
// len(buf) requests, handing each to visit (nil: none).
func readCached(name string, off, end int64, buf []byte, visit func(off int64, b []byte)) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	var total int64
	for pos := off; pos < end; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), end-pos)], pos)
		if n > 0 && visit != nil {
			visit(pos, buf[:n])
		}
		total += int64(n)
		pos += int64(n)
		if err == io.EOF || (err == nil && n == 0) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("bench: read %s: %w", name, err)
		}
	}
	return total, nil
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

// cachedReadBlock is the request size of ReadFilesCached: what one read of
// a warm scan copies (a channel's pages of a 1 MiB limb), small enough to
// stay in a core's cache until the next.
const cachedReadBlock = 256 << 10

// ReadFilesCached reads every regular file matching pattern in dir
// through the page cache, threads goroutines each reading its own
// contiguous share of every file in cachedReadBlock requests into one
// buffer of its own, passes times, and reports the fastest pass. With the
// files cached it is the rate at which this machine copies page-cache data
// into a process — the ceiling of a warm scan that reads its store
// with read(2), as the device does (a mapping of the files kept between
// scans avoids the copy; see BENCHMARKS.md for both measured).
func ReadFilesCached(dir, pattern string, threads, passes int) (RawRead, error) {
	names, err := matchingFiles(dir, pattern)
	if err != nil {
		return RawRead{}, err
	}
	threads, passes = max(1, threads), max(1, passes)
	files := make([]*os.File, len(names))
	sizes := make([]int64, len(names))
	var total int64
	for i, name := range names {
		if files[i], err = os.Open(name); err != nil {
			for _, f := range files[:i] {
				f.Close()
			}
			return RawRead{}, fmt.Errorf("bench: %w", err)
		}
		defer files[i].Close()
		st, err := files[i].Stat()
		if err != nil {
			return RawRead{}, fmt.Errorf("bench: %w", err)
		}
		sizes[i] = st.Size()
		total += st.Size()
	}
	best := RawRead{Bytes: total}
	for range passes {
		secs, err := readShares(files, sizes, threads)
		if err != nil {
			return RawRead{}, err
		}
		if best.Seconds == 0 || secs < best.Seconds {
			best.Seconds = secs
		}
	}
	best.GBps = float64(total) / best.Seconds / 1e9
	return best, nil
}

// readShares is one pass of ReadFilesCached: threads goroutines each read
// their contiguous share of every file (sizes[i] bytes of files[i]). It
// returns the pass's seconds.
func readShares(files []*os.File, sizes []int64, threads int) (float64, error) {
	var (
		wg    sync.WaitGroup
		read  atomic.Int64
		total int64
		errs  = make([]error, threads)
	)
	for _, n := range sizes {
		total += n
	}
	start := time.Now()
	for t := range threads {
		wg.Go(func() {
			buf := make([]byte, cachedReadBlock)
			for i, f := range files {
				lo, hi := sizes[i]*int64(t)/int64(threads), sizes[i]*int64(t+1)/int64(threads)
				for off := lo; off < hi; {
					n, err := f.ReadAt(buf[:min(int64(len(buf)), hi-off)], off)
					off += int64(n)
					read.Add(int64(n))
					if n == 0 && err == nil {
						err = io.ErrUnexpectedEOF
					}
					if errors.Is(err, io.EOF) {
						err = io.ErrUnexpectedEOF
					}
					if err != nil && off < hi {
						errs[t] = fmt.Errorf("bench: read %s: %w", f.Name(), err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if read.Load() != total {
		return 0, fmt.Errorf("bench: cached read got %d of %d bytes", read.Load(), total)
	}
	return secs, nil
}
