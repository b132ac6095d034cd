// Package kv lays a keyword (key → value) database out as a cuckoo hash
// table of fixed-size buckets, so that a client reads a key by private
// queries of whole buckets, always the same number whatever the key and
// whether it is there. It knows nothing of devices: the client seals each
// bucket as one record of an index PIR database and queries it.
//
// Keys never leave the client in the clear: a key is stored as a 16-byte
// tag, HMAC-SHA256 under a key derived from the owner's data key, so the
// device (which also only ever sees sealed buckets) cannot test a guess.
// A value is cut into chunks of SlotData bytes; chunk j of key k is an
// item of its own, tagged Tag(k, j), and every chunk carries the value's
// whole length. An item may sit in either of two buckets, chosen from its
// tag and the table's public seed; each bucket holds Slots items. Two
// choices of four-slot buckets fill to well above the load factor used
// here (0.8) before an insertion fails; a failed build draws a new seed.
//
// A lookup reads, for every chunk a value of the maximum size could have
// (Layout.Chunks), both candidate buckets: 2·Chunks queries, always, so the
// device learns neither the key, nor whether it exists, nor the length of
// its value.
//
// Delta operations (puts, deletes, record sets) made between two builds
// of the table are kept as an Ops list (delta.go), small and read whole
// with every query.
//
// # Large values: an index and a heap (heap.go; issue 40)
//
// Chunks in buckets make a lookup of values up to 80 KB in 2 KB slots 80
// full scans, each with its own ring stage (16 s on a 63K-key set), and
// store every slot of the table at the maximum chunk (8.3× the data). The
// heap layout splits the database in two:
//
//   - an index: the cuckoo table as above, one item a key (IndexLayout:
//     slots of a 12-byte Pointer, the value's offset and length), so its
//     buckets are small (seven slots in a 256-byte column) and its queries
//     cheap;
//   - a heap: the values one after another in one stream, cut into
//     columns of Payload bytes, each column one sealed record of a second
//     LWE database whose records are whole columns (Heap.Rows stored
//     bytes: by default the LWE dimension N, one pack of the packed mode,
//     or 2N where the largest value spans 16 columns of N or more and the
//     values outweigh one more pack of packer).
//
// A lookup asks both candidate buckets of the index, then exactly
// Heap.Queries() = ⌈(MaxValue−1)/Payload⌉ + 1 heap columns: those the
// value spans, then columns drawn uniformly (all of them for a key not in
// the index, or with an empty value). Every query is a
// packed LWE query of the same shape, so the device sees the same two
// rounds, of the same sizes and numbers, for every key; each answer is a
// sealed record (the heap's under a key of its own, bound to its column
// and generation), so a device that answers with another column, another
// database's, another generation's or an altered one is caught.
//
// Why not one column at least as tall as the largest value (SimplePIR's
// and YPIR+SP's large-record layout, the first plan): what a generation
// stores beside its data grows with its rows, not its columns — the
// packer's precomputation, 32 MiB per 2048 rows in packing version 3
// (96 MiB in version 1), whatever the column count. A column of 80 KB is
// 40 packs of rows: 1.3 GiB of packer for a 50 MB data set. A short heap
// keeps it at one or two packs: the columns are many and the packer
// fixed, and the answer costs the same, because packing costs per row
// returned: 41 columns of 2048 rows are 41 packs, one column of 83,968
// rows would be 41 packs too. What the short heap adds is per-query
// overhead (a query vector and a set of packing keys each, decoded on the
// device) and a scan of the heap a query (shared by the device's batcher
// but each its own arithmetic). Columns of 2N rows halve the queries for
// one more pack of packer: on a 55 MB set of 80 KB values, 23 queries a
// lookup instead of 43 and a third less time a lookup, stored 2.44× the
// data instead of 1.82× (defaultHeapRows; BENCHMARKS.md). Values straddle
// columns (no bin-packing: the stream wastes nothing but the last
// column's tail), which costs one query a lookup beyond
// ⌈MaxValue/Payload⌉.
//
// Both databases are stored for the packed mode only (the packer, no hint
// diagonals): the heap layout needs a device that answers packed queries
// (a cuckoo database is made instead when the layout is left to the
// default on an older device). Its measured figures are in BENCHMARKS.md,
// "Large values in one lookup (issue 40, item 4)".
package kv
