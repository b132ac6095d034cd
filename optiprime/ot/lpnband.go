package ot

import (
	"crypto/cipher"
	"encoding/binary"
)

// The blocked LPN gather. A regular-set table (9.4 MB) is larger than the
// last-level cache, so gathering row by row misses on nearly every load.
// lpnEncode instead draws the indices of a band of rows, sorts them by the
// table slice they fall in, and XORs one slice at a time into the band's
// outputs: a slice is small enough to stay cached during its pass.

// Tunables (variables while measuring).
var (
	lpnBandChunks = 64 // chunks per band
	lpnSliceShift = 16 // a slice is 2^16 blocks, 1 MiB
	lpnBlocked    = true
	lpnTouch      = true
)

// lpnScratch holds one worker's band buffers.
type lpnScratch struct {
	stream []byte
	idx    []int32
	ent    []uint32 // bucket s at ent[s*cap:], row<<shift | index in slice
	n      []int    // entries in each bucket
}

// band encodes the rows of chunks [c0, c1).
func (s *lpnScratch) band(p ferretParams, secret, out []block, bits, bitsOut []uint8, c0, c1 int) {
	shift := uint(lpnSliceShift)
	slices := (p.k-1)>>shift + 1
	capa := lpnWeight * lpnRowChunk * lpnBandChunks
	if s.stream == nil {
		s.stream = make([]byte, 4*lpnWeight*lpnRowChunk)
		s.idx = make([]int32, lpnWeight*lpnRowChunk*lpnBandChunks)
		if lpnBlocked {
			s.ent = make([]uint32, capa*slices)
			s.n = make([]int, slices)
		}
	}
	r0 := c0 * lpnRowChunk
	rows := min(c1*lpnRowChunk, p.n) - r0
	dst := out[r0 : r0+rows]
	var bdst []uint8
	if bits != nil {
		bdst = bitsOut[r0 : r0+rows]
	}
	if !lpnBlocked {
		idx := s.idx[:rows*lpnWeight]
		for c := c0; c < c1; c++ {
			lo := (c - c0) * lpnRowChunk * lpnWeight
			lpnDraw(p, c, s.stream, idx[lo:min(lo+lpnRowChunk*lpnWeight, len(idx))])
		}
		if useAsmGather {
			lpnGatherAsm(&secret[0], &idx[0], &dst[0], rows)
		} else {
			lpnGather(secret, idx, dst)
		}
		if bits != nil {
			lpnGatherBits(bits, idx, bdst)
		}
		return
	}
	cnt := s.n[:slices]
	clear(cnt)
	ent := s.ent
	mask := uint32(1)<<shift - 1
	k := uint64(p.k)
	var iv [16]byte
	for c := c0; c < c1; c++ {
		m := min(lpnRowChunk, p.n-c*lpnRowChunk) * lpnWeight
		binary.LittleEndian.PutUint64(iv[:], uint64(p.k))
		binary.LittleEndian.PutUint64(iv[8:], uint64(c)<<32)
		stream := s.stream[:4*m]
		clear(stream)
		cipher.NewCTR(lpnKey, iv[:]).XORKeyStream(stream, stream)
		row := uint32((c - c0) * lpnRowChunk)
		for i := 0; i < m; i += lpnWeight {
			for j := i; j < i+lpnWeight; j++ {
				x := uint32(uint64(binary.LittleEndian.Uint32(stream[4*j:])) * k >> 32)
				sl := x >> shift
				ent[int(sl)*capa+cnt[sl]] = row<<shift | x&mask
				cnt[sl]++
			}
			row++
		}
	}
	for sl := 0; sl < slices; sl++ {
		e := ent[sl*capa : sl*capa+cnt[sl]]
		if len(e) == 0 {
			continue
		}
		tab := secret[sl<<shift : min(p.k, (sl+1)<<shift)]
		if useAsmGather {
			if lpnTouch {
				lpnTouchAsm(&tab[0], len(tab)/4)
			}
			lpnPassAsm(&tab[0], &e[0], len(e), &dst[0], shift)
		} else {
			lpnPass(tab, e, dst, shift)
		}
		if bits != nil {
			btab := bits[sl<<shift:]
			for _, v := range e {
				bdst[v>>shift] ^= btab[v&mask]
			}
		}
	}
}

// lpnPass sets dst[e>>shift] ^= tab[e&(1<<shift-1)] for each entry e.
func lpnPass(tab []block, ent []uint32, dst []block, shift uint) {
	mask := uint32(1)<<shift - 1
	for _, v := range ent {
		dst[v>>shift] = dst[v>>shift].xor(tab[v&mask])
	}
}
