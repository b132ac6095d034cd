package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// oobSize is the size of the spare area after each page (see the package doc).
const oobSize = 16

// slotSize is the on-disk size of one row of a channel file.
func slotSize(l layout.Layout) int64 { return int64(l.PageSize) + oobSize }

// sealSlot fills the spare area of slot (page data already in place).
func sealSlot(slot []byte, pageSize int, gen Generation, pageNo uint32) {
	oob := slot[pageSize:]
	binary.LittleEndian.PutUint64(oob[4:], uint64(gen))
	binary.LittleEndian.PutUint32(oob[12:], pageNo)
	crc := crc32.Update(crc32.Checksum(slot[:pageSize], castagnoli), castagnoli, oob[4:])
	binary.LittleEndian.PutUint32(oob[0:], crc)
}

// checkSlot verifies a slot read back; it returns a reason on failure.
func checkSlot(slot []byte, pageSize int, gen Generation, pageNo uint32) string {
	return checkSlotAs(slot, pageSize, gen, pageNo, true)
}

// checkSlotAs checks a slot's identity (generation, page number) and, if
// payload, its CRC-32C.
func checkSlotAs(slot []byte, pageSize int, gen Generation, pageNo uint32, payload bool) string {
	if !payload {
		oob := slot[pageSize:]
		if g := Generation(binary.LittleEndian.Uint64(oob[4:])); g != gen {
			return fmt.Sprintf("page belongs to generation %d", g)
		}
		if p := binary.LittleEndian.Uint32(oob[12:]); p != pageNo {
			return fmt.Sprintf("page holds object page %d, want %d", p, pageNo)
		}
		return ""
	}
	oob := slot[pageSize:]
	crc := crc32.Update(crc32.Checksum(slot[:pageSize], castagnoli), castagnoli, oob[4:])
	if got := binary.LittleEndian.Uint32(oob[0:]); got != crc {
		return fmt.Sprintf("CRC-32C mismatch: stored %#08x, computed %#08x", got, crc)
	}
	if g := Generation(binary.LittleEndian.Uint64(oob[4:])); g != gen {
		return fmt.Sprintf("page belongs to generation %d", g)
	}
	if p := binary.LittleEndian.Uint32(oob[12:]); p != pageNo {
		return fmt.Sprintf("page holds object page %d, want %d", p, pageNo)
	}
	return ""
}

// writeObject lays the limbs out as pages in per-channel buffers covering
// the object's extents, writes them (one goroutine per channel) and fsyncs
// the channel files it wrote. A channel holding none of the object's pages
// (a small object's rows on the other channels are unused slots) is not
// written or synced: a one-page update costs one fsync, not one per
// channel, and does not flush what other writers left in those files.
func (s *Store) writeObject(d layout.Descriptor, gen Generation, limbs [][]byte) error {
	l := s.lay
	sh := d.Shape()
	ss := slotSize(l)
	rows := l.PartRows(sh)
	k := l.PagesPerLimb(sh)
	// bufs[ch][part] spans the part's rows on that channel.
	bufs := make([][2][]byte, l.Channels)
	for ch := range bufs {
		for p := range rows {
			if rows[p] > 0 {
				bufs[ch][p] = make([]byte, rows[p]*ss)
			}
		}
	}
	used := make([]bool, l.Channels)
	split := layout.SplitPoly(sh)
	for poly := 0; poly < sh.Polys; poly++ {
		part := 0
		if poly >= split {
			part = 1
		}
		for limb := 0; limb < sh.Limbs; limb++ {
			data := limbs[poly*sh.Limbs+limb]
			for page := 0; page < k; page++ {
				loc, err := l.Locate(d, poly, limb, page)
				if err != nil {
					return err
				}
				off := int64(loc.Row-d.Base[part]) * ss
				slot := bufs[loc.Channel][part][off : off+ss]
				used[loc.Channel] = true
				copy(slot[:l.PageSize], data[min(page*l.PageSize, len(data)):])
				sealSlot(slot, l.PageSize, gen, uint32((poly*sh.Limbs+limb)*k+page))
			}
		}
	}
	errs := make([]error, l.Channels)
	var wg sync.WaitGroup
	for ch := range bufs {
		if !used[ch] {
			continue
		}
		wg.Add(1)
		go func(ch int) {
			defer wg.Done()
			f := s.files[ch]
			for p := range rows {
				if rows[p] == 0 {
					continue
				}
				if err := s.writeFlushed(f, bufs[ch][p], int64(d.Base[p])*ss); err != nil {
					errs[ch] = fmt.Errorf("write ch%02d: %w", ch, err)
					return
				}
			}
			if err := f.Sync(); err != nil {
				errs[ch] = fmt.Errorf("fsync ch%02d: %w", ch, err)
			}
		}(ch)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// flushChunk is how much of a large write may sit dirty in the page cache
// before it is written out. An fsync flushes every dirty page of its file,
// not only its writer's: a one-page update's fsync beside a compaction's
// 16 MiB tile writes to the same channel file waited for the tile's pages.
// A large write flushes each chunk as it goes, so another writer's fsync
// finds at most one chunk of it still dirty.
const flushChunk = 1 << 20

// writeFlushed writes b at off, flushing chunk by chunk when b is larger
// than a chunk (the caller's fsync still makes it durable).
func (s *Store) writeFlushed(f *os.File, b []byte, off int64) error {
	if len(b) <= flushChunk {
		_, err := f.WriteAt(b, off)
		return err
	}
	for len(b) > 0 {
		n := min(len(b), flushChunk)
		if _, err := f.WriteAt(b[:n], off); err != nil {
			return err
		}
		if flushRange(f, off, int64(n)) {
			s.rangeFlushes.Add(1)
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// readLimb reads one limb into dst (len LimbBytes), one goroutine per
// channel holding pages of it, verifying every page.
func (s *Store) readLimb(name string, r record, poly, limb int, dst []byte) error {
	sh := r.desc.Shape()
	if len(dst) != sh.LimbBytes() {
		return fmt.Errorf("store: read %q: buffer of %d bytes for a %d-byte limb", name, len(dst), sh.LimbBytes())
	}
	return s.visitLimb(name, r, poly, limb, func(off int, page []byte) { copy(dst[off:], page) })
}

// visitLimb reads one limb page by page, one goroutine per channel holding
// pages of it, and hands each verified page to f (its offset in the limb,
// its bytes straight from the read buffer, valid during the call only).
// f is called from several goroutines at once, for distinct pages.
func (s *Store) visitLimb(name string, r record, poly, limb int, f func(off int, page []byte)) error {
	return s.visitLimbAs(name, r, poly, limb, true, true, f)
}

// visitLimbAs is visitLimb, verifying each page's payload CRC or not, and
// reading the channels on goroutines of their own or one after another.
func (s *Store) visitLimbAs(name string, r record, poly, limb int, payload, parallel bool, f func(off int, page []byte)) error {
	l := s.lay
	sh := r.desc.Shape()
	if poly < 0 || poly >= sh.Polys || limb < 0 || limb >= sh.Limbs {
		return fmt.Errorf("store: read %q: limb (poly %d, limb %d) outside %s", name, poly, limb, sh)
	}
	runs, err := l.LimbRuns(r.desc, poly, limb)
	if err != nil {
		return fmt.Errorf("store: read %q: %w", name, err)
	}
	k := l.PagesPerLimb(sh)
	firstPageNo := (poly*sh.Limbs + limb) * k
	ss := slotSize(l)
	errs := make([]error, len(runs))
	readRun := func(i int, run layout.Run) {
		start := int64(run.Row) * ss
		bp := getBuf(int64(run.Count) * ss)
		defer slotPool.Put(bp)
		buf := *bp
		n, err := s.files[run.Channel].ReadAt(buf, start)
		if err != nil && !errors.Is(err, io.EOF) {
			errs[i] = fmt.Errorf("store: read %q poly %d limb %d from ch%02d: %w", name, poly, limb, run.Channel, err)
			return
		}
		errs[i] = visitRun(name, r, l, poly, limb, firstPageNo, run, buf, int(int64(n)/ss), sh, payload, f)
	}
	// One goroutine per further channel; the caller reads the first run itself.
	var wg sync.WaitGroup
	for i := 1; i < len(runs); i++ {
		if !parallel {
			readRun(i, runs[i])
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			readRun(i, runs[i])
		}(i)
	}
	readRun(0, runs[0])
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// visitRun verifies the pages of one run in buf (whole slots: have of
// them) and hands each to f.
func visitRun(name string, r record, l layout.Layout, poly, limb, firstPageNo int, run layout.Run, buf []byte, have int,
	sh layout.Shape, payload bool, f func(off int, page []byte)) error {
	ss := slotSize(l)
	for j := 0; j < run.Count; j++ {
		page := run.FirstPage + j*run.Stride
		corrupt := func(reason string) error {
			return &CorruptPageError{Object: name, Generation: r.gen, Poly: poly, Limb: limb, Page: page,
				Channel: run.Channel, Row: run.Row + uint32(j), Reason: reason}
		}
		if j >= have {
			return corrupt("page missing (channel file too short)")
		}
		slot := buf[int64(j)*ss : int64(j+1)*ss]
		// A verified read checks the page before handing it on; a scan
		// without the payload check checks its identity right after (the
		// trailer then comes in with the page's last bytes): on a mismatch
		// the error ends the read, and what f computed is discarded.
		if payload {
			if reason := checkSlotAs(slot, l.PageSize, r.gen, uint32(firstPageNo+page), true); reason != "" {
				return corrupt(reason)
			}
		}
		data := slot[:l.PageSize]
		if end := sh.LimbBytes() - page*l.PageSize; end < l.PageSize {
			data = data[:end]
		}
		f(page*l.PageSize, data)
		if !payload {
			if reason := checkSlotAs(slot, l.PageSize, r.gen, uint32(firstPageNo+page), false); reason != "" {
				return corrupt(reason)
			}
		}
	}
	return nil
}

// readObject reads every limb of the object: one goroutine per channel (the
// caller serving channel 0; all on the caller if not parallel) reads the channel's rows of each part in one
// positional read and verifies every page in them.
// out must hold NumLimbs slices of LimbBytes bytes each.
func (s *Store) readObject(name string, r record, out [][]byte, parallel bool) error {
	l := s.lay
	d := r.desc
	sh := d.Shape()
	if len(out) != sh.NumLimbs() {
		return fmt.Errorf("store: read %q: %d limb buffers for %d limbs", name, len(out), sh.NumLimbs())
	}
	for i, b := range out {
		if len(b) != sh.LimbBytes() {
			return fmt.Errorf("store: read %q: limb buffer %d is %d bytes, want %d", name, i, len(b), sh.LimbBytes())
		}
	}
	rows := l.PartRows(sh)
	k := l.PagesPerLimb(sh)
	ss := slotSize(l)
	errs := make([]error, l.Channels)
	readChannel := func(ch int) {
		for p := range rows {
			if rows[p] == 0 {
				continue
			}
			bp := getBuf(rows[p] * ss)
			buf := *bp
			n, err := s.files[ch].ReadAt(buf, int64(d.Base[p])*ss)
			if err != nil && !errors.Is(err, io.EOF) {
				slotPool.Put(bp)
				errs[ch] = fmt.Errorf("store: read %q from ch%02d: %w", name, ch, err)
				return
			}
			for j := int64(0); j < rows[p]; j++ {
				row := d.Base[p] + uint32(j)
				poly, limb, page, ok := l.PageAt(d, ch, row)
				if !ok {
					continue // unused slot at the edge of the part
				}
				slot := buf[j*ss : (j+1)*ss]
				reason := ""
				if int64(n) < (j+1)*ss {
					reason = "page missing (channel file too short)"
				} else {
					reason = checkSlot(slot, l.PageSize, r.gen, uint32((poly*sh.Limbs+limb)*k+page))
				}
				if reason != "" {
					slotPool.Put(bp)
					errs[ch] = &CorruptPageError{Object: name, Generation: r.gen, Poly: poly, Limb: limb, Page: page,
						Channel: ch, Row: row, Reason: reason}
					return
				}
				copy(out[poly*sh.Limbs+limb][page*l.PageSize:], slot[:l.PageSize])
			}
			slotPool.Put(bp)
		}
	}
	var wg sync.WaitGroup
	for ch := 1; ch < l.Channels; ch++ {
		if !parallel {
			readChannel(ch)
			continue
		}
		wg.Add(1)
		go func(ch int) {
			defer wg.Done()
			readChannel(ch)
		}(ch)
	}
	readChannel(0)
	wg.Wait()
	for _, err := range errs { // the lowest channel's error
		if err != nil {
			return err
		}
	}
	return nil
}

// openChannelFiles opens (creating if needed) ch00 … ch(C-1) in dir.
func openChannelFiles(dir string, channels int) (files []*os.File, created bool, err error) {
	for ch := 0; ch < channels; ch++ {
		path := channelPath(dir, ch)
		if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
			created = true
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			for _, g := range files {
				g.Close()
			}
			return nil, false, fmt.Errorf("store: open channel file: %w", err)
		}
		files = append(files, f)
	}
	return files, created, nil
}

func channelPath(dir string, ch int) string { return filepath.Join(dir, fmt.Sprintf("ch%02d", ch)) }

// slotPool recycles read buffers (pointers to slices, to avoid allocating on Put).
var slotPool sync.Pool

// getBuf returns a pooled buffer of exactly n bytes (contents undefined).
func getBuf(n int64) *[]byte {
	if bp, ok := slotPool.Get().(*[]byte); ok && int64(cap(*bp)) >= n {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]byte, n)
	return &b
}
