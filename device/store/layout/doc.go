// Package layout is the channel-interleaving rule of the Rosemary object store
// and its 16-byte object descriptor. It is pure computation (no I/O) so that the
// on-disk store (package store) and the SSD simulator derive page locations
// from exactly the same code.
//
// A device has C channels, each an array of fixed-size pages addressed by a
// row number (the page offset within the channel). An object is
// Polys x Limbs RNS limbs of LimbBytes bytes each; every limb occupies
// k = ceil(LimbBytes/PageSize) pages. The object's pages are numbered
// n = (poly*Limbs + limb)*k + page and dealt round-robin over the channels:
// page n goes to channel n mod C. Consecutive limbs therefore start on a
// rotating channel ((limb index * k) mod C), each limb's pages spread over the
// channels with per-channel counts differing by at most one, and the pages a
// limb (or the whole object) places on one channel lie in consecutive rows, so
// a channel's share is one contiguous read.
//
// Like the paper's descriptor ("two 4-byte base addresses for the two
// polynomials with a few bytes for the limb count and layout rule"), an object
// is split into two parts: polys [0, ceil(Polys/2)) start at row Base[0] and
// the remaining polys at row Base[1]. The second part continues the round-robin
// phase of the first (its first page goes to channel T0 mod C, where T0 is the
// first part's page count), so the whole object stays balanced. No page table
// is kept: Locate derives every page location from the descriptor.
package layout
