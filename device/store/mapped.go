package store

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// A scan reads its pages through a read-only mapping of each channel file,
// kept for the life of the store: a pass over a cached database then
// touches each byte once, where a positional read copies every page from
// the page cache into a buffer first (measured here on a 4 GiB database,
// two cores: reading the cached files with no compute 21.7–25.4 GB/s, a
// kept mapping scanned in place 25–28 GB/s; BENCHMARKS.md). The mapped
// pages are page cache, counted in the process's RssFile, not its own
// memory (RssAnon).
//
// A mapping covers the channel file as long as it was when mapped; a scan
// that needs rows past it maps the file again at its new length, and the
// old mapping is unmapped when its last scan ends. The store's own writes
// go through the same page cache (pwrite into a shared mapping's file), so
// a mapping always sees them.

// chanMap is one read-only mapping of a channel file's first len(data) bytes.
type chanMap struct {
	data    []byte
	refs    int  // scans using it (mapTable.mu)
	retired bool // replaced by a longer mapping: unmapped at refs 0
}

// mapTable holds the current mapping of each channel.
type mapTable struct {
	mu  sync.Mutex
	cur []*chanMap // by channel; nil until a scan maps it
	off bool       // mapping is unavailable here: scans read
}

// acquireMap returns a referenced mapping of channel ch covering at least
// its first end bytes; nil, nil if the file is shorter than that (the
// caller reports the missing pages) or mapping is unavailable (the caller
// reads instead: ok false).
func (s *Store) acquireMap(ch int, end int64) (m *chanMap, ok bool, err error) {
	t := &s.maps
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.off {
		return nil, false, nil
	}
	if t.cur == nil {
		t.cur = make([]*chanMap, len(s.files))
	}
	if c := t.cur[ch]; c != nil && int64(len(c.data)) >= end {
		c.refs++
		return c, true, nil
	}
	fi, err := s.files[ch].Stat()
	if err != nil {
		return nil, true, fmt.Errorf("store: stat ch%02d: %w", ch, err)
	}
	if fi.Size() < end {
		return nil, true, nil
	}
	data, err := mapFile(s.files[ch], fi.Size())
	if err != nil {
		if errors.Is(err, errMapUnsupported) {
			t.off = true
			return nil, false, nil
		}
		return nil, true, fmt.Errorf("store: map ch%02d: %w", ch, err)
	}
	if c := t.cur[ch]; c != nil {
		c.retired = true
		if c.refs == 0 {
			unmapFile(c.data)
		}
	}
	c := &chanMap{data: data, refs: 1}
	t.cur[ch] = c
	return c, true, nil
}

// releaseMap drops a reference taken by acquireMap.
func (s *Store) releaseMap(c *chanMap) {
	t := &s.maps
	t.mu.Lock()
	defer t.mu.Unlock()
	c.refs--
	if c.refs == 0 && c.retired {
		unmapFile(c.data)
	}
}

// unmapAll retires every mapping (Close: no scan is running; a Mapped
// still held keeps its mappings until released).
func (s *Store) unmapAll() {
	t := &s.maps
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, c := range t.cur {
		if c != nil {
			c.retired = true
			if c.refs == 0 {
				unmapFile(c.data)
			}
			t.cur[i] = nil
		}
	}
	t.off = true
}

// scanLimbMapped is visitLimbAs for a scan (identity checked, not the
// payload CRC), on the calling goroutine over mapped pages. ok is false
// where mapping is unavailable, or where the limb's first page is not
// cached (nothing was visited: the caller reads the limb); cached says
// the handle's pages were found cached before (no need to ask), and is
// set when they are.
func (s *Store) scanLimbMapped(name string, r record, cached *atomic.Bool, poly, limb int, f func(off int, page []byte)) (ok bool, err error) {
	l := s.lay
	sh := r.desc.Shape()
	if poly < 0 || poly >= sh.Polys || limb < 0 || limb >= sh.Limbs {
		return true, fmt.Errorf("store: read %q: limb (poly %d, limb %d) outside %s", name, poly, limb, sh)
	}
	runs, err := l.LimbRuns(r.desc, poly, limb)
	if err != nil {
		return true, fmt.Errorf("store: read %q: %w", name, err)
	}
	firstPageNo := (poly*sh.Limbs + limb) * l.PagesPerLimb(sh)
	ss := slotSize(l)
	for i, run := range runs {
		start, end := int64(run.Row)*ss, int64(run.Row+uint32(run.Count))*ss
		c, mapped, err := s.acquireMap(run.Channel, end)
		if !mapped {
			if i > 0 {
				return true, fmt.Errorf("store: read %q: channel mapping ended mid-limb", name)
			}
			return false, nil
		}
		if err != nil {
			return true, fmt.Errorf("store: read %q: %w", name, err)
		}
		if i == 0 && c != nil && !cached.Load() {
			if !resident(c.data, start) {
				// Not in the page cache: read the limb instead, every
				// channel at once in large requests (faulting its pages
				// in through the mapping one by one is slower); the
				// reads leave the pages cached, and the next pass maps
				// them.
				s.releaseMap(c)
				return false, nil
			}
			cached.Store(true)
		}
		if c == nil {
			// The channel file ends before the run: visitRun names the
			// first missing page.
			err = visitRun(name, r, l, poly, limb, firstPageNo, run, nil, 0, sh, false, f)
		} else {
			err = visitMapped(name, r, l, poly, limb, firstPageNo, run, c.data[start:end], sh, f)
			s.releaseMap(c)
		}
		if err != nil {
			return true, err
		}
	}
	return true, nil
}

// visitMapped is visitRun over mapped pages. A file cut short under the
// mapping (by something other than the store) faults on the first page
// past its end: that fault is the named error of a missing page, not a
// crash of the process.
func visitMapped(name string, r record, l layout.Layout, poly, limb, firstPageNo int, run layout.Run, buf []byte,
	sh layout.Shape, f func(off int, page []byte)) error {
	return CatchFaults(func() error {
		return visitRun(name, r, l, poly, limb, firstPageNo, run, buf, run.Count, sh, false, f)
	}, func(addr uintptr) error {
		return &CorruptPageError{Object: name, Generation: r.gen, Poly: poly, Limb: limb, Page: run.FirstPage,
			Channel: run.Channel, Row: run.Row, Reason: fmt.Sprintf("page unreadable (fault at %#x: channel file cut short?)", addr)}
	})
}

// CatchFaults runs f, which reads mapped store pages, on the calling
// goroutine; a memory fault in it (a channel file cut short under its
// mapping) returns onFault's error instead of crashing the process. Any
// other panic goes on.
func CatchFaults(f func() error, onFault func(addr uintptr) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			fault, ok := p.(interface{ Addr() uintptr })
			if !ok {
				panic(p)
			}
			err = onFault(fault.Addr())
		}
	}()
	return f()
}

// Prefetch asks the kernel to start reading the object's pages into the
// page cache (madvise WILLNEED on its rows of every channel's mapping), so
// a scan about to take its limbs one by one finds them in flight, as the
// channel reads of VisitLimb, one per channel, would have them. It is
// advice: nothing is reported where it cannot be given.
func (o *Object) Prefetch() { o.readAhead(false) }

// Populate reads the object's pages into the page cache and maps them,
// every channel at once (madvise MADV_POPULATE_READ, one goroutine a
// channel, each faulting its rows in with the kernel reading ahead), and
// returns when they are there; where the kernel cannot, it is Prefetch.
// A scan's prefetcher runs it on its own goroutine some tiles ahead of
// the scan, so that the disk has several channels' reads in flight while
// the scan's cores multiply (a goroutine blocked in the system call
// leaves its core to them). Like Prefetch it reports nothing.
func (o *Object) Populate() { o.readAhead(true) }

// readAhead is Prefetch (wait false) or Populate (wait true). A part whose
// first page is cached is taken as cached.
func (o *Object) readAhead(wait bool) {
	if o.released.Load() || o.s.begin() != nil {
		return
	}
	defer o.s.end()
	s, d := o.s, o.rec.desc
	ss := slotSize(s.lay)
	rows := s.lay.PartRows(d.Shape())
	var wg sync.WaitGroup
	defer wg.Wait()
	for p := range rows {
		if rows[p] == 0 {
			continue
		}
		start, end := int64(d.Base[p])*ss, (int64(d.Base[p])+rows[p])*ss
		// One page tells for the part: its rows are written, read and
		// evicted together across the channels, and each check is a
		// system call (four a tile cost a warm 1 GiB query 2 ms).
		if c, mapped, err := s.acquireMap(0, end); !mapped {
			return
		} else if err == nil && c != nil {
			warm := resident(c.data, start)
			s.releaseMap(c)
			if warm {
				continue
			}
		}
		for ch := range s.files {
			c, mapped, err := s.acquireMap(ch, end)
			if !mapped {
				return
			}
			if err != nil || c == nil {
				continue
			}
			if !wait {
				adviseWillNeed(c.data, start, end)
				s.releaseMap(c)
				continue
			}
			wg.Go(func() {
				defer s.releaseMap(c)
				_, _ = populate(c.data, start, end)
			})
		}
	}
}

// Mapped is a pinned object's pages in place, for a reader that takes them
// in any order (a ring stage multiplying stored plaintexts piece by piece).
// It holds the channel mappings covering the object until Release; the
// pages are valid until then. Like ScanLimb, a page's identity is checked
// (generation, page number), not its payload CRC: the data is its owner's
// to authenticate end to end. A file cut short under the mapping faults on
// access; a reader running with debug.SetPanicOnFault turns that into an
// error (the device's ring stage does).
type Mapped struct {
	o    *Object
	maps []*chanMap // by channel; nil where the object has no rows
}

// Map maps the object's pages (ErrUnmapped where files cannot be mapped
// here: read them instead).
func (o *Object) Map() (*Mapped, error) {
	if o.released.Load() {
		return nil, fmt.Errorf("store: map %q: %w", o.name, ErrReleased)
	}
	if err := o.s.begin(); err != nil {
		return nil, err
	}
	defer o.s.end()
	s, d := o.s, o.rec.desc
	ss := slotSize(s.lay)
	rows := s.lay.PartRows(d.Shape())
	var end int64
	for p := range rows {
		if rows[p] > 0 {
			end = max(end, (int64(d.Base[p])+rows[p])*ss)
		}
	}
	m := &Mapped{o: o, maps: make([]*chanMap, len(s.files))}
	for ch := range s.files {
		// A channel's file may end before the object's last row there
		// (an unused slot at a part's edge): map what it has; a page
		// past it is named when asked for.
		c, mapped, err := s.acquireMap(ch, end)
		if !mapped {
			m.Release()
			return nil, fmt.Errorf("store: map %q: %w", o.name, ErrUnmapped)
		}
		if err != nil {
			m.Release()
			return nil, fmt.Errorf("store: map %q: %w", o.name, err)
		}
		if c == nil {
			fi, err := s.files[ch].Stat()
			if err == nil && fi.Size() > 0 {
				c, _, err = s.acquireMap(ch, fi.Size())
			}
			if err != nil {
				m.Release()
				return nil, fmt.Errorf("store: map %q: %w", o.name, err)
			}
		}
		m.maps[ch] = c
	}
	return m, nil
}

// Release drops the mappings (the pages handed out become invalid).
func (m *Mapped) Release() {
	for i, c := range m.maps {
		if c != nil {
			m.o.s.releaseMap(c)
			m.maps[i] = nil
		}
	}
}

// LimbPages returns the payload of every page of one limb in page order,
// in place (the last page cut to the limb's end), each page's identity
// checked.
func (m *Mapped) LimbPages(poly, limb int) ([][]byte, error) {
	o, l := m.o, m.o.s.lay
	sh := o.rec.desc.Shape()
	if poly < 0 || poly >= sh.Polys || limb < 0 || limb >= sh.Limbs {
		return nil, fmt.Errorf("store: read %q: limb (poly %d, limb %d) outside %s", o.name, poly, limb, sh)
	}
	runs, err := l.LimbRuns(o.rec.desc, poly, limb)
	if err != nil {
		return nil, fmt.Errorf("store: read %q: %w", o.name, err)
	}
	k := l.PagesPerLimb(sh)
	firstPageNo := (poly*sh.Limbs + limb) * k
	ss := slotSize(l)
	pages := make([][]byte, k)
	for _, run := range runs {
		c := m.maps[run.Channel]
		for j := 0; j < run.Count; j++ {
			page := run.FirstPage + j*run.Stride
			start := int64(run.Row+uint32(j)) * ss
			corrupt := func(reason string) error {
				return &CorruptPageError{Object: o.name, Generation: o.rec.gen, Poly: poly, Limb: limb, Page: page,
					Channel: run.Channel, Row: run.Row + uint32(j), Reason: reason}
			}
			if c == nil || start+ss > int64(len(c.data)) {
				return nil, corrupt("page missing (channel file too short)")
			}
			slot := c.data[start : start+ss]
			if reason := checkSlotAs(slot, l.PageSize, o.rec.gen, uint32(firstPageNo+page), false); reason != "" {
				return nil, corrupt(reason)
			}
			data := slot[:l.PageSize]
			if end := sh.LimbBytes() - page*l.PageSize; end < l.PageSize {
				data = data[:end]
			}
			pages[page] = data
		}
	}
	return pages, nil
}
