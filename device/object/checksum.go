package object

import "hash/crc32"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is an object's end-to-end checksum: the CRC-32C (Castagnoli,
// as the store's pages) of its limbs in order, each as stored (words of
// the object's word size, little-endian). A device computes it from
// pages whose own CRCs checked out and sends it with the object; a
// device receiving a copy recomputes it before publishing, so a copy
// damaged anywhere between the source's disk and the receiver's store
// is refused.
func Checksum(limbs [][]byte) uint32 {
	var c uint32
	for _, l := range limbs {
		c = crc32.Update(c, castagnoli, l)
	}
	return c
}
