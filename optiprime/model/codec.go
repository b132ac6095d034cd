package model

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
)

// File format of a quantized model (all integers big endian):
//
//	"RMQCNN01"                                  magic and version
//	u8 flags (bit 0: weights present), u8 ℓ, u8 activation scale,
//	u8 weight bits, u16 layers
//	per layer: 8 × u32 (Ci, H, W, Co, Kh, Kw, stride, pad), u8 shift
//	if weights: per layer, its weights as i16 (OIHW), then its biases as i64
//	u32 CRC-32 (IEEE) of everything before it
//
// A model without weights is the public part the server sends a client.
const fileMagic = "RMQCNN01"

// MaxFileSize bounds a model file.
const MaxFileSize = 64 << 20

// MarshalBinary encodes the model (with weights if it has any).
func (q *Quantized) MarshalBinary() ([]byte, error) {
	withW := q.W != nil
	if withW {
		if err := q.Validate(); err != nil {
			return nil, err
		}
	} else if err := q.ValidatePublic(); err != nil {
		return nil, err
	}
	b := []byte(fileMagic)
	flags := byte(0)
	if withW {
		flags = 1
	}
	b = append(b, flags, byte(q.LogT), byte(q.ActScale), byte(q.WeightBits))
	b = binary.BigEndian.AppendUint16(b, uint16(len(q.Arch)))
	for i, s := range q.Arch {
		for _, v := range []int{s.Ci, s.H, s.W, s.Co, s.Kh, s.Kw, s.Stride, s.Pad} {
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		}
		b = append(b, byte(q.Shift[i]))
	}
	if withW {
		for i := range q.Arch {
			for _, w := range q.W[i] {
				b = binary.BigEndian.AppendUint16(b, uint16(int16(w)))
			}
			for _, v := range q.B[i] {
				b = binary.BigEndian.AppendUint64(b, uint64(v))
			}
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

// UnmarshalBinary decodes and validates a model.
func (q *Quantized) UnmarshalBinary(b []byte) error {
	m, err := decodeModel(b)
	if err != nil {
		return fmt.Errorf("model: decode: %w", err)
	}
	*q = *m
	return nil
}

// reader consumes big-endian fields, failing once on a short buffer.
type reader struct {
	b   []byte
	err error
}

func (r *reader) next(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = errors.New("truncated")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte {
	if v := r.next(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if v := r.next(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.next(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if v := r.next(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func decodeModel(b []byte) (*Quantized, error) {
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%d bytes exceed the limit %d", len(b), MaxFileSize)
	}
	if len(b) < len(fileMagic)+4 {
		return nil, errors.New("truncated")
	}
	if string(b[:len(fileMagic)]) != fileMagic {
		return nil, errors.New("bad magic (not a Rosemary quantized model, or another version)")
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("checksum mismatch")
	}
	r := &reader{b: body[len(fileMagic):]}
	flags := r.u8()
	q := &Quantized{LogT: int(r.u8()), ActScale: int(r.u8()), WeightBits: int(r.u8())}
	n := int(r.u16())
	if r.err != nil {
		return nil, r.err
	}
	if flags > 1 {
		return nil, fmt.Errorf("unknown flags %#x", flags)
	}
	if n == 0 || n > maxLayers {
		return nil, fmt.Errorf("%d layers outside [1, %d]", n, maxLayers)
	}
	for i := 0; i < n; i++ {
		var f [8]int
		for j := range f {
			v := r.u32()
			if v > 1<<20 {
				return nil, fmt.Errorf("layer %d: dimension %d too large", i, v)
			}
			f[j] = int(v)
		}
		q.Arch = append(q.Arch, linear.ConvShape{Ci: f[0], H: f[1], W: f[2], Co: f[3], Kh: f[4], Kw: f[5], Stride: f[6], Pad: f[7]})
		q.Shift = append(q.Shift, int(r.u8()))
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := q.ValidatePublic(); err != nil {
		return nil, err
	}
	if flags&1 != 0 {
		for _, s := range q.Arch {
			need := 2*s.WeightLen() + 8*s.Co
			if len(r.b) < need {
				return nil, errors.New("truncated weights")
			}
			w := make([]int64, s.WeightLen())
			for j := range w {
				w[j] = int64(int16(r.u16()))
			}
			bs := make([]int64, s.Co)
			for j := range bs {
				bs[j] = int64(r.u64())
			}
			q.W = append(q.W, w)
			q.B = append(q.B, bs)
		}
		if err := q.Validate(); err != nil {
			return nil, err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(r.b))
	}
	return q, nil
}

// Load reads a quantized model file.
func Load(path string) (*Quantized, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("model: %s: %d bytes exceed the limit %d", path, st.Size(), MaxFileSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	q := new(Quantized)
	if err := q.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if q.W == nil {
		return nil, fmt.Errorf("model: %s holds no weights", path)
	}
	return q, nil
}

// Save writes the model file.
func (q *Quantized) Save(path string) error {
	b, err := q.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}
