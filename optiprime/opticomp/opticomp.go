package opticomp

import (
	"encoding/binary"
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/share"
)

const (
	headerSize = 12
	metaSize   = 4
	maxPos     = 1 << 20
	maxLen     = 1 << 11
	endBit     = 1 << 31
)

var magic = [4]byte{'O', 'P', 'C', 1}

// Stats describes one compressed polynomial.
type Stats struct {
	N               int // coefficients
	NonZero         int // non-zero coefficients
	Blocks          int // blocks written (after gap merging and splitting)
	Segments        int
	DenseBytes      int // N coefficients bit-packed at the same width
	CompressedBytes int // header + segments
}

// Ratio is DenseBytes / CompressedBytes.
func (s Stats) Ratio() float64 {
	if s.CompressedBytes == 0 {
		return 0
	}
	return float64(s.DenseBytes) / float64(s.CompressedBytes)
}

type block struct{ pos, len int }

// Compress packs poly (coefficients < 2^bits) into segments of segBytes.
func Compress(poly []uint64, bits, segBytes int) ([]byte, Stats, error) {
	N := len(poly)
	logN := 0
	for 1<<logN < N {
		logN++
	}
	if N == 0 || 1<<logN != N || N > maxPos {
		return nil, Stats{}, fmt.Errorf("opticomp: polynomial length %d is not a power of two ≤ 2^20", N)
	}
	if bits < 1 || bits > 64 {
		return nil, Stats{}, fmt.Errorf("opticomp: coefficient width %d outside [1,64]", bits)
	}
	coefBytes := (bits + 7) / 8
	if segBytes < metaSize+coefBytes || segBytes > 1<<16-1 {
		return nil, Stats{}, fmt.Errorf("opticomp: segment size %d outside [%d, 65535]", segBytes, metaSize+coefBytes)
	}
	st := Stats{N: N, DenseBytes: (N*bits + 7) / 8}
	for i, v := range poly {
		if bits < 64 && v>>uint(bits) != 0 {
			return nil, Stats{}, fmt.Errorf("opticomp: coefficient %d does not fit %d bits", i, bits)
		}
		if v != 0 {
			st.NonZero++
		}
	}
	// Runs of non-zeros; merge gaps whose zeros cost less than a header.
	var blocks []block
	for i := 0; i < N; {
		if poly[i] == 0 {
			i++
			continue
		}
		j := i
		for j < N && poly[j] != 0 {
			j++
		}
		if n := len(blocks); n > 0 {
			last := &blocks[n-1]
			if gap := i - (last.pos + last.len); gap*bits <= 8*metaSize {
				last.len = j - last.pos
				i = j
				continue
			}
		}
		blocks = append(blocks, block{i, j - i})
		i = j
	}
	out := make([]byte, headerSize)
	copy(out, magic[:])
	out[4], out[5] = byte(logN), byte(bits)
	binary.LittleEndian.PutUint16(out[6:], uint16(segBytes))
	var seg []byte
	lastMeta := -1 // offset of the last meta in seg
	flush := func() {
		if seg == nil {
			return
		}
		m := binary.LittleEndian.Uint32(seg[lastMeta:])
		binary.LittleEndian.PutUint32(seg[lastMeta:], m|endBit)
		seg = append(seg, make([]byte, segBytes-len(seg))...)
		out = append(out, seg...)
		st.Segments++
		seg, lastMeta = nil, -1
	}
	for _, b := range blocks {
		pos, rem := b.pos, b.len
		for rem > 0 {
			if seg != nil && segBytes-len(seg) < metaSize+coefBytes {
				flush()
			}
			if seg == nil {
				seg = make([]byte, 0, segBytes)
			}
			room := ((segBytes - len(seg) - metaSize) * 8) / bits
			n := min(rem, room, maxLen)
			lastMeta = len(seg)
			seg = binary.LittleEndian.AppendUint32(seg, uint32(pos)|uint32(n-1)<<20)
			seg = share.Pack(seg, poly[pos:pos+n], bits)
			st.Blocks++
			pos += n
			rem -= n
		}
	}
	flush()
	binary.LittleEndian.PutUint32(out[8:], uint32(st.Segments))
	st.CompressedBytes = len(out)
	return out, st, nil
}

// Decompress rebuilds the polynomial, validating the whole encoding.
func Decompress(data []byte) ([]uint64, error) {
	if len(data) < headerSize {
		return nil, fmt.Errorf("opticomp: %d bytes, shorter than the header", len(data))
	}
	if [4]byte(data[:4]) != magic {
		return nil, fmt.Errorf("opticomp: bad magic/version % x", data[:4])
	}
	logN, bits := int(data[4]), int(data[5])
	segBytes := int(binary.LittleEndian.Uint16(data[6:]))
	nseg := int(binary.LittleEndian.Uint32(data[8:]))
	if logN > 20 {
		return nil, fmt.Errorf("opticomp: logN %d > 20", logN)
	}
	if bits < 1 || bits > 64 {
		return nil, fmt.Errorf("opticomp: coefficient width %d outside [1,64]", bits)
	}
	coefBytes := (bits + 7) / 8
	if segBytes < metaSize+coefBytes {
		return nil, fmt.Errorf("opticomp: segment size %d too small", segBytes)
	}
	if uint64(len(data)-headerSize) != uint64(nseg)*uint64(segBytes) {
		return nil, fmt.Errorf("opticomp: %d payload bytes for %d segments of %d", len(data)-headerSize, nseg, segBytes)
	}
	N := 1 << logN
	poly := make([]uint64, N)
	next := 0 // first position not yet covered
	for s := 0; s < nseg; s++ {
		seg := data[headerSize+s*segBytes : headerSize+(s+1)*segBytes]
		off := 0
		for {
			if off+metaSize > len(seg) {
				return nil, fmt.Errorf("opticomp: segment %d has no end block", s)
			}
			m := binary.LittleEndian.Uint32(seg[off:])
			off += metaSize
			pos, n, end := int(m&(maxPos-1)), int(m>>20&(maxLen-1))+1, m&endBit != 0
			if pos < next || pos+n > N {
				return nil, fmt.Errorf("opticomp: segment %d block [%d,%d) overlaps, is out of order or exceeds N=%d", s, pos, pos+n, N)
			}
			nb := (n*bits + 7) / 8
			if off+nb > len(seg) {
				return nil, fmt.Errorf("opticomp: segment %d block at %d overruns the segment", s, pos)
			}
			share.UnpackInto(poly[pos:pos+n], seg[off:off+nb], bits)
			if tail := n * bits % 8; tail != 0 && seg[off+nb-1]>>uint(tail) != 0 {
				return nil, fmt.Errorf("opticomp: segment %d block at %d has non-zero padding bits", s, pos)
			}
			off += nb
			next = pos + n
			if end {
				break
			}
		}
		for _, b := range seg[off:] {
			if b != 0 {
				return nil, fmt.Errorf("opticomp: segment %d has non-zero padding", s)
			}
		}
	}
	return poly, nil
}
