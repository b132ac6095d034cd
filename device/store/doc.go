// Package store is Rosemary's on-disk object store: FHE objects (ciphertexts,
// plaintexts, keys) kept limb by limb in pages interleaved across channel
// files, located through 16-byte descriptors (package store/layout) rather
// than a page table, published atomically as immutable generations in a bbolt
// catalog.
//
// # Files
//
// A store directory holds the catalog `catalog.db` and one file per channel,
// `ch00`, `ch01`, … (each could sit on its own disk). A channel file is an
// array of slots; slot r (row r) starts at byte r·(P+16), P the page size:
//
//	off      len  field
//	0        P    page data (limb bytes; the tail of a limb's last page is zero)
//	P        4    CRC-32C (Castagnoli) of data ‖ bytes [P+4, P+16)
//	P+4      8    generation that wrote the page (uint64 LE)
//	P+12     4    page number within the object (uint32 LE): (poly·Limbs+limb)·k+page
//
// The 16 trailing bytes play the role of a flash page's spare (OOB) area. A
// read verifies the checksum and that generation and page number are the ones
// the descriptor asks for, so a flipped bit, a torn or never-written page, and
// a page of another object all fail with a *CorruptPageError naming object,
// poly, limb and page.
//
// # Catalog
//
// bbolt buckets (keys and values little-endian unless noted):
//
//	meta     "layout" → layout.Layout record (8 bytes)
//	         "hwm"    → uint32: rows [hwm, 2^32) are free on every channel
//	         "gen"    → uint64: last generation number published
//	objects  name     → record of the object's current generation
//	dead     gen (uint64 big-endian) → record of a reclaimable generation
//	free     start row (uint32 big-endian) → row count (uint32): free extents
//
// A record is 29 bytes: version (1) | generation (uint64) | descriptor (16
// bytes) | CRC-32C of the preceding 25 bytes. The object's Kind is the
// descriptor's class byte.
//
// Invariant, checked by Open: the extents of all records in objects and dead,
// and the free extents, are disjoint and tile [0, hwm) exactly; no free extent
// ends at hwm (it is merged into the space above hwm instead).
//
// # Generations, crash safety, reclamation
//
// Put allocates rows (first fit from the free list, else above hwm), writes
// every page of the new generation into rows no live or pinned generation
// uses, fsyncs the channel files, and only then, in one bbolt transaction,
// stores the new record, moves the previous generation's record to dead and
// removes the allocated rows from the free list. Until that transaction
// commits the new pages are unreachable, so a crash at any point leaves either
// the old or the new generation visible, never a mix; rows written by an
// unpublished Put are still free in the catalog and are simply reused.
//
// Puts of different objects write their pages at the same time: only the
// plan (generation number, rows reserved in memory so that no other Put
// plans them) and the publication hold the writer lock, so a small Put
// does not wait for a large one's pages and fsync. Generations may thus
// publish out of the order they were numbered ("gen" holds the highest
// published), and a Put may publish rows above hwm while an earlier one
// still writes rows below them: it first turns the rows in between into a
// free extent, which the earlier Put takes when it publishes (or which is
// reused if it fails). Writers of one object go one at a time; PutIf and
// DeleteIf write only over the generation they are given. An fsync flushes
// every dirty page of its file, whoever wrote it, so a large Put flushes its
// pages 1 MiB at a time as it writes them: a small Put's fsync of the same
// channel file then waits for at most that much of it.
//
// Reclamation uses a free-extent list in the catalog (no compaction): garbage
// collection moves every dead generation that no reader pins to the free list,
// coalescing neighbouring extents, in one transaction. Every Put and Delete
// runs it in its own publishing transaction (one catalog commit per write),
// leaving out the generation that write retires, which a reader may still be
// about to pin; that one is reclaimed by the next write, once writes pause
// (200 ms), at Close, on Open, or on demand (GC). Readers pin a generation (Acquire)
// for as long as they read it, so its rows are never reused underneath them;
// a generation is never modified in place. Channel files never shrink.
//
// # ISP mode
//
// SetISP(true) puts the store in the in-storage-processing mode of the paper:
// conventional writes (Put, Delete) are refused with ErrISPMode until
// SetISP(false); reads and garbage collection (which only edits the catalog)
// continue.
//
// # Reads
//
// A limb read issues one positional read per channel holding pages of the
// limb, all channels in parallel (one goroutine per channel, the caller's own
// goroutine serving the first); a channel's share of a limb is a run of
// consecutive rows (see package layout). A whole-object read (Get, ReadAll)
// reads each channel's rows of each part in one positional read, all
// channels in parallel. Every page is verified; read buffers are pooled.
//
// Scans (ScanLimb) and in-place readers (Object.Map) read through
// read-only mappings of the channel files kept for the store's life
// (mapped.go): a cached page is computed on where it lies in the page
// cache, with no copy; a limb not yet cached is read as above, and an
// object not cached can be read in ahead of its scan (Object.Populate:
// every channel's rows at once, in the kernel's MADV_POPULATE_READ; or
// Object.Prefetch, readahead advice). They check
// each page's identity, not its payload CRC (their data is authenticated
// end to end by its owner; scrubbing checks every CRC). A file cut short
// under a mapping faults; the fault is a CorruptPageError, not a crash.
package store
