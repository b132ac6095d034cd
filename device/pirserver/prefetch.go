package pirserver

import (
	"sync"

	"github.com/rosemary-fhe/rosemary/device/store"
)

// prefetchBytes is how far ahead of a scan its tiles are read into the page
// cache where they are not there (at least tilesAhead tiles). Measured on
// a 4 GiB store of 32 MiB tiles on this repository's virtual disk, the
// page cache dropped before each pass, five passes each interleaved
// (BENCHMARKS.md): madvise WILLNEED of the next two tiles from the
// scanning worker, 2.5–3.9 GB/s (median 2.8); the tiles populated four
// ahead by a goroutine of their own, every channel at once, 3.9–4.6 GB/s
// (median 4.3), where the best raw read of the same files (16 streams of
// eight 512 KiB requests) took 2.2–4.4 GB/s (median 4.0).
const prefetchBytes = 128 << 20

// tilesAhead is the fewest tiles the prefetcher keeps ahead of a scan.
const tilesAhead = 2

// prefetcher populates a source's tiles (store.Object.Populate) in order,
// on a goroutine of its own, up to a window ahead of the furthest tile a
// scan has started: the disk is kept busy with every channel's reads
// while the scan's workers multiply what has arrived. A scan of a cached
// database costs it one residency check a tile. The zero prefetcher does
// nothing.
type prefetcher struct {
	n       int         // tiles
	ahead   int         // the window past the furthest started tile
	fill    func(k int) // populates tile k
	mu      sync.Mutex
	next    int  // the next tile to populate
	want    int  // tiles below want are to be populated
	running bool // the goroutine is populating
	stopped bool
	done    sync.WaitGroup
}

// newPrefetcher is the prefetcher of a source's tiles: its window is
// prefetchBytes of tiles, at least tilesAhead.
func newPrefetcher(tiles []*store.Object) *prefetcher {
	ahead := tilesAhead
	if len(tiles) > 0 {
		if tb := tiles[0].Info().Shape.Bytes(); tb > 0 {
			ahead = max(ahead, int((prefetchBytes+tb-1)/tb))
		}
	}
	return &prefetcher{n: len(tiles), ahead: ahead, fill: func(k int) { tiles[k].Populate() }}
}

// started notes that a scan started tile k (a pass starts over at tile 0)
// and has the tiles of the window after it populated.
func (p *prefetcher) started(k int) {
	if p == nil || p.fill == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if k == 0 {
		// A new pass over the tiles.
		p.next, p.want = 0, 0
	}
	p.want = max(p.want, min(p.n, k+p.ahead+1))
	if p.running || p.next >= p.want {
		return
	}
	p.running = true
	p.done.Add(1)
	go p.run()
}

// run populates tiles until it reaches the window's end or is stopped.
func (p *prefetcher) run() {
	defer p.done.Done()
	for {
		p.mu.Lock()
		if p.stopped || p.next >= p.want {
			p.running = false
			p.mu.Unlock()
			return
		}
		k := p.next
		p.next++
		p.mu.Unlock()
		p.fill(k)
	}
}

// stop ends the prefetching and waits for the tile being populated (the
// caller releases the tiles next).
func (p *prefetcher) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.done.Wait()
}
