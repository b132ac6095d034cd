package device

import (
	"encoding/binary"
	"unsafe"
)

// littleEndian: the host stores uint16 little-endian, so 2-byte words can
// be read in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// decode16 widens len(dst) little-endian 2-byte words of raw into dst.
func decode16(raw []byte, dst []uint64) {
	if littleEndian && len(raw) >= 2*len(dst) && len(dst) > 0 {
		src := unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), len(dst))
		for i, v := range src {
			dst[i] = uint64(v)
		}
		return
	}
	for i := range dst {
		dst[i] = uint64(binary.LittleEndian.Uint16(raw[2*i:]))
	}
}
