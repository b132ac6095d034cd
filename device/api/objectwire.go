package api

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
)

// An object crosses the wire as it is stored: each limb as little-endian
// words of its stored word size (8, 2 or 1 bytes), its trailing zero words
// left out when a limb ends in them (a blob's padding to a power of two).
// So a manifest costs about a byte a byte, and a compact plaintext two
// bytes a coefficient, not eight.

// wordBytes is a message's word size (0 means 8).
func wordBytes(wb uint32) (int, error) {
	switch wb {
	case 0, 8:
		return 8, nil
	case 1, 2:
		return int(wb), nil
	}
	return 0, fmt.Errorf("%w: %d-byte words (want 1, 2 or 8)", ErrInvalid, wb)
}

// encodeObjectLimbs encodes limbs as words of wb bytes, their trailing zero
// words left out if trim; it returns the data and the words of a whole
// limb. A value that does not fit wb bytes is refused.
func encodeObjectLimbs(limbs [][]uint64, wb int, trim bool) ([][]byte, uint32, error) {
	if len(limbs) == 0 {
		return nil, 0, nil
	}
	n := len(limbs[0])
	out := make([][]byte, len(limbs))
	for i, l := range limbs {
		if len(l) != n {
			return nil, 0, fmt.Errorf("%w: limb %d has %d words, limb 0 has %d", ErrInvalid, i, len(l), n)
		}
		end := len(l)
		for trim && end > 0 && l[end-1] == 0 {
			end--
		}
		b := make([]byte, wb*end)
		for j, v := range l[:end] {
			if wb < 8 && v>>(8*wb) != 0 {
				return nil, 0, fmt.Errorf("%w: limb %d word %d is %d, wider than %d bytes", ErrInvalid, i, j, v, wb)
			}
			switch wb {
			case 8:
				binary.LittleEndian.PutUint64(b[8*j:], v)
			case 2:
				binary.LittleEndian.PutUint16(b[2*j:], uint16(v))
			case 1:
				b[j] = byte(v)
			}
		}
		out[i] = b
	}
	return out, uint32(n), nil
}

// decodeObjectLimbs checks and decodes an object's limbs: words of wb
// bytes, each limb limbWords long (0: as long as its data, the same for
// every limb), 1..MaxLimbCoeffs words. With bounded (a request, on the
// device) the bytes it makes are at most twice those it reads plus 4 KiB,
// so a caller cannot ask for more memory than it nearly sends.
func decodeObjectLimbs(what string, data [][]byte, wbRaw, limbWords uint32, bounded bool) ([][]uint64, error) {
	wb, err := wordBytes(wbRaw)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, nil
	}
	n := int(limbWords)
	var carried int64
	for i, l := range data {
		if len(l)%wb != 0 {
			return nil, fmt.Errorf("%w: %s: limb %d has %d bytes, not whole %d-byte words", ErrInvalid, what, i, len(l), wb)
		}
		if limbWords == 0 {
			if i == 0 {
				n = len(l) / wb
			} else if len(l)/wb != n {
				return nil, fmt.Errorf("%w: %s: limb %d has %d words, limb 0 has %d", ErrInvalid, what, i, len(l)/wb, n)
			}
		} else if len(l)/wb > n {
			return nil, fmt.Errorf("%w: %s: limb %d has %d words, more than its %d", ErrInvalid, what, i, len(l)/wb, n)
		}
		carried += int64(len(l))
	}
	if n < 1 || n > MaxLimbCoeffs {
		return nil, fmt.Errorf("%w: %s: limbs of %d words (1 to %d)", ErrInvalid, what, n, MaxLimbCoeffs)
	}
	decoded := int64(len(data)) * int64(n) * int64(wb)
	if decoded > MaxMessageBytes || bounded && !withinExpansion(decoded, carried) {
		return nil, fmt.Errorf("%w: %s: %d limbs of %d words from %d bytes", ErrInvalid, what, len(data), n, carried)
	}
	flat := make([]uint64, len(data)*n)
	out := make([][]uint64, len(data))
	for i, l := range data {
		dst := flat[i*n : (i+1)*n : (i+1)*n]
		for j := range len(l) / wb {
			switch wb {
			case 8:
				dst[j] = binary.LittleEndian.Uint64(l[8*j:])
			case 2:
				dst[j] = uint64(binary.LittleEndian.Uint16(l[2*j:]))
			case 1:
				dst[j] = uint64(l[j])
			}
		}
		out[i] = dst
	}
	return out, nil
}

// withinExpansion bounds what a request's trimmed limbs decode to.
func withinExpansion(decoded, carried int64) bool { return decoded <= 2*carried+4096 }

// encodePutLimbs is encodeObjectLimbs for a request: trimmed where the
// device's bound on the expansion allows (a blob's padding), whole
// otherwise (a limb mostly of zeros).
func encodePutLimbs(limbs [][]uint64, wb int) ([][]byte, uint32, error) {
	data, words, err := encodeObjectLimbs(limbs, wb, true)
	if err != nil {
		return nil, 0, err
	}
	var carried int64
	for _, d := range data {
		carried += int64(len(d))
	}
	if withinExpansion(int64(len(data))*int64(words)*int64(wb), carried) {
		return data, words, nil
	}
	return encodeObjectLimbs(limbs, wb, false)
}

// objectLimbsFromProto checks and decodes the kind and the limbs of an
// object as a put sends it (bounded) and a get returns it.
func objectLimbsFromProto(kind uint32, data [][]byte, wb, limbWords uint32, bounded bool) (object.Kind, [][]uint64, error) {
	if kind > 255 {
		return 0, nil, fmt.Errorf("%w: kind %d exceeds 255", ErrInvalid, kind)
	}
	limbs, err := decodeObjectLimbs("object", data, wb, limbWords, bounded)
	if err != nil {
		return 0, nil, err
	}
	return object.Kind(kind), limbs, nil
}

// ObjectReply is the Get reply of an object as stored: raw holds its limbs
// in words of shape.WordSize bytes; each crosses with its trailing zero
// words left out (LimbWords says how long a limb is), crc is the stored
// object's checksum.
func ObjectReply(kind object.Kind, shape object.Shape, raw [][]byte, crc uint32) *devicepb.GetResponse {
	ws := int(shape.WordSize)
	data := make([][]byte, len(raw))
	for i, b := range raw {
		data[i] = trimZeroWords(b, ws)
	}
	return &devicepb.GetResponse{Kind: uint32(kind), Polys: uint32(shape.Polys), Limbs: uint32(shape.Limbs), Data: data, Crc32C: &crc,
		WordBytes: uint32(ws), LimbWords: uint32(1) << shape.LogN}
}

// trimZeroWords is b without its trailing zero words of ws bytes.
func trimZeroWords(b []byte, ws int) []byte {
	end := len(b)
	for end >= ws && allZero(b[end-ws:end]) {
		end -= ws
	}
	return b[:end]
}

// shapeOf is the shape of an object of polys × limbs limbs of words as a
// message names it, checked against the limbs it carries: as many as it
// names, of a power-of-two length.
func shapeOf(polys, limbs uint32, words [][]uint64, wb uint32) (object.Shape, error) {
	if len(words) == 0 || uint64(polys)*uint64(limbs) != uint64(len(words)) {
		return object.Shape{}, fmt.Errorf("%w: %d limbs for %d polys × %d limbs", ErrInvalid, len(words), polys, limbs)
	}
	n := len(words[0])
	logN := bits.Len(uint(n)) - 1
	if n != 1<<logN {
		return object.Shape{}, fmt.Errorf("%w: limb length %d is not a power of two", ErrInvalid, n)
	}
	ws, err := wordBytes(wb)
	if err != nil {
		return object.Shape{}, err
	}
	return object.Shape{Polys: int(polys), Limbs: int(limbs), LogN: uint8(logN), WordSize: uint8(ws)}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ObjectLimbs reads a Get reply's object as words, checked: the reply
// comes from a device.
func ObjectLimbs(m *devicepb.GetResponse) (object.Kind, [][]uint64, error) {
	return objectLimbsFromProto(m.GetKind(), m.GetData(), m.GetWordBytes(), m.GetLimbWords(), false)
}

// ObjectRaw reads a Get reply's object as stored — its limbs whole, in
// words of its word size — checked against the polys and limbs it names.
func ObjectRaw(m *devicepb.GetResponse) (object.Kind, object.Shape, [][]byte, error) {
	kind, limbs, err := ObjectLimbs(m)
	if err != nil {
		return 0, object.Shape{}, nil, err
	}
	shape, err := shapeOf(m.GetPolys(), m.GetLimbs(), limbs, m.GetWordBytes())
	if err != nil {
		return 0, object.Shape{}, nil, err
	}
	return kind, shape, rawOf(limbs, int(shape.WordSize)), nil
}

// BlobBytes reads a Get reply's blob: its one limb of bytes, decoded
// (object.DecodeBlob).
func BlobBytes(m *devicepb.GetResponse) ([]byte, error) {
	if len(m.GetData()) != 1 || m.GetWordBytes() != 1 || object.Kind(m.GetKind()) != object.KindBlob {
		return nil, fmt.Errorf("%w: not a blob", ErrInvalid)
	}
	n := int(m.GetLimbWords())
	if n == 0 {
		n = len(m.GetData()[0])
	}
	if n > MaxLimbCoeffs || len(m.GetData()[0]) > n {
		return nil, fmt.Errorf("%w: a blob of %d bytes in a limb of %d", ErrInvalid, len(m.GetData()[0]), n)
	}
	raw := make([]byte, n)
	copy(raw, m.GetData()[0])
	return object.DecodeBlob(raw)
}

// NewPut is the Put of an object of polys × limbs limbs given as words,
// stored in words of wordBytes bytes (8, 2 or 1; 0 means 8): encoded as the
// device stores it, each limb's trailing zero words left out where the
// device's expansion bound allows. A word wider than wordBytes is refused.
func NewPut(name string, kind object.Kind, polys, limbs int, data [][]uint64, wordBytes int) (*devicepb.PutRequest, error) {
	wb, err := wordBytes32(wordBytes)
	if err != nil {
		return nil, err
	}
	enc, words, err := encodePutLimbs(data, wb)
	if err != nil {
		return nil, fmt.Errorf("device: put %q: %w", name, err)
	}
	return &devicepb.PutRequest{Name: name, Kind: uint32(kind), Polys: uint32(max(polys, 0)), Limbs: uint32(max(limbs, 0)), Data: enc,
		WordBytes: uint32(wb), LimbWords: words}, nil
}

func wordBytes32(wb int) (int, error) {
	if wb < 0 || wb > 8 {
		return 0, fmt.Errorf("%w: %d-byte words (want 1, 2 or 8)", ErrInvalid, wb)
	}
	return wordBytes(uint32(wb))
}

// PutRaw is the Put of an object given as stored: its limbs in words of
// shape.WordSize bytes.
func PutRaw(name string, kind object.Kind, shape object.Shape, raw [][]byte) *devicepb.PutRequest {
	ws := max(int(shape.WordSize), 1)
	data := make([][]byte, len(raw))
	var carried int64
	for i, b := range raw {
		data[i] = trimZeroWords(b, ws)
		carried += int64(len(data[i]))
	}
	if !withinExpansion(shape.Bytes(), carried) {
		data = raw // mostly zeros: sent whole, as the device's bound asks
	}
	return &devicepb.PutRequest{Name: name, Kind: uint32(kind), Polys: uint32(shape.Polys), Limbs: uint32(shape.Limbs), Data: data,
		WordBytes: uint32(shape.WordSize), LimbWords: uint32(1) << shape.LogN}
}

// PutObject reads a Put on the device: the object's kind, shape and limbs
// as stored (whole), checked — the word size, the limbs against the polys
// and limbs named, a power-of-two limb length, and what the request may
// make the device allocate (at most about twice what it carries).
func PutObject(m *devicepb.PutRequest) (object.Kind, object.Shape, [][]byte, error) {
	kind, limbs, err := objectLimbsFromProto(m.GetKind(), m.GetData(), m.GetWordBytes(), m.GetLimbWords(), true)
	if err != nil {
		return 0, object.Shape{}, nil, err
	}
	shape, err := shapeOf(m.GetPolys(), m.GetLimbs(), limbs, m.GetWordBytes())
	if err != nil {
		return 0, object.Shape{}, nil, err
	}
	if err := shape.Validate(); err != nil {
		return 0, object.Shape{}, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return kind, shape, rawOf(limbs, int(shape.WordSize)), nil
}

// rawOf lays words out as stored: little-endian words of ws bytes.
func rawOf(limbs [][]uint64, ws int) [][]byte {
	raw := make([][]byte, len(limbs))
	for i, l := range limbs {
		b := make([]byte, ws*len(l))
		for j, v := range l {
			switch ws {
			case 8:
				binary.LittleEndian.PutUint64(b[8*j:], v)
			case 2:
				binary.LittleEndian.PutUint16(b[2*j:], uint16(v))
			case 1:
				b[j] = byte(v)
			}
		}
		raw[i] = b
	}
	return raw
}
