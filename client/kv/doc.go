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
package kv
