package device

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Wire format. Every message is
//
//	magic "RSD" | version (1 byte) | message type (1 byte) | body
//
// with integers little-endian, strings and byte strings as a uint32 length
// then the bytes, and limb lists as a uint32 count, a uint32 limb length
// (coefficients, the same for every limb) and the coefficients as uint64s.
// A decoder rejects a wrong magic, version or type, a length beyond the
// limits, truncation and trailing bytes.
const (
	wireMagic   = "RSD"
	wireVersion = 1

	// MaxMessageBytes bounds one encoded message (requests and replies).
	MaxMessageBytes = 64 << 20
	// MaxNameBytes bounds object and program names.
	MaxNameBytes = 255
	// MaxLimbCoeffs bounds the coefficients of one limb (N ≤ 2^17).
	MaxLimbCoeffs = 1 << 17
	// MaxBindings bounds the operands of one Send.
	MaxBindings = 16
)

// Message types.
const (
	msgConfigReq uint8 = iota + 1
	msgConfigResp
	msgProgSetReq
	msgProgSetResp
	msgPutReq
	msgPutResp
	msgGetReq
	msgGetResp
	msgDeleteReq
	msgDeleteResp
	msgSendReq
	msgSendResp
	msgRecvReq
	msgRecvResp
	msgReleaseReq
	msgReleaseResp
	msgStatsReq
	msgStatsResp
)

// message is a wire message.
type message interface {
	msgType() uint8
	encode(w *writer)
	decode(r *reader)
}

type writer struct{ b []byte }

func (w *writer) u8(v uint8)   { w.b = append(w.b, v) }
func (w *writer) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) bool(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}
func (w *writer) bytes(v []byte) { w.u32(uint32(len(v))); w.b = append(w.b, v...) }
func (w *writer) str(v string)   { w.u32(uint32(len(v))); w.b = append(w.b, v...) }
func (w *writer) limbs(v [][]uint64) {
	w.u32(uint32(len(v)))
	n := 0
	if len(v) > 0 {
		n = len(v[0])
	}
	w.u32(uint32(n))
	for _, l := range v {
		for _, c := range l {
			w.u64(c)
		}
	}
}

// reader decodes with limits; the first error sticks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, a...)
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.fail("truncated %s: need %d bytes at offset %d, have %d", what, n, r.off, len(r.b)-r.off)
		return nil
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v
}

func (r *reader) u8(what string) uint8 {
	b := r.take(1, what)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u32(what string) uint32 {
	b := r.take(4, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64(what string) uint64 {
	b := r.take(8, what)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) bool(what string) bool {
	switch v := r.u8(what); v {
	case 0:
		return false
	case 1:
		return true
	default:
		r.fail("%s: boolean byte %d", what, v)
		return false
	}
}

func (r *reader) bytes(what string, max int) []byte {
	n := r.u32(what + " length")
	if r.err == nil && int64(n) > int64(max) {
		r.fail("%s of %d bytes exceeds %d", what, n, max)
		return nil
	}
	b := r.take(int(n), what)
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

func (r *reader) str(what string) string {
	return string(r.bytes(what, MaxNameBytes))
}

func (r *reader) limbs(what string) [][]uint64 {
	count := r.u32(what + " limb count")
	n := r.u32(what + " limb length")
	if r.err != nil {
		return nil
	}
	if count == 0 {
		if n != 0 {
			r.fail("%s: no limbs but limb length %d", what, n)
		}
		return nil
	}
	if n == 0 || n > MaxLimbCoeffs {
		r.fail("%s: limb length %d outside [1, %d]", what, n, MaxLimbCoeffs)
		return nil
	}
	total := uint64(count) * uint64(n) * 8
	if total > uint64(len(r.b)-r.off) {
		r.fail("truncated %s: %d limbs of %d coefficients need %d bytes, have %d", what, count, n, total, len(r.b)-r.off)
		return nil
	}
	data := r.take(int(total), what)
	flat := make([]uint64, int(count)*int(n))
	for i := range flat {
		flat[i] = binary.LittleEndian.Uint64(data[8*i:])
	}
	out := make([][]uint64, count)
	for i := range out {
		out[i] = flat[i*int(n) : (i+1)*int(n) : (i+1)*int(n)]
	}
	return out
}

// Marshal encodes m.
func marshal(m message) ([]byte, error) {
	w := &writer{b: make([]byte, 0, 64)}
	w.b = append(w.b, wireMagic...)
	w.u8(wireVersion)
	w.u8(m.msgType())
	m.encode(w)
	if len(w.b) > MaxMessageBytes {
		return nil, fmt.Errorf("device: message of %d bytes exceeds %d", len(w.b), MaxMessageBytes)
	}
	return w.b, nil
}

// unmarshal decodes data into m, which must be the expected type.
func unmarshal(data []byte, m message) error {
	if len(data) > MaxMessageBytes {
		return fmt.Errorf("device: message of %d bytes exceeds %d", len(data), MaxMessageBytes)
	}
	if len(data) < len(wireMagic)+2 {
		return fmt.Errorf("device: truncated message (%d bytes)", len(data))
	}
	if string(data[:3]) != wireMagic {
		return fmt.Errorf("device: not a device message (magic %q)", data[:3])
	}
	if v := data[3]; v != wireVersion {
		return fmt.Errorf("device: unsupported wire version %d (want %d)", v, wireVersion)
	}
	if t := data[4]; t != m.msgType() {
		return fmt.Errorf("device: message type %d, want %d", t, m.msgType())
	}
	r := &reader{b: data, off: 5}
	m.decode(r)
	if r.err != nil {
		return fmt.Errorf("device: decode message type %d: %w", m.msgType(), r.err)
	}
	if r.off != len(data) {
		return fmt.Errorf("device: %d trailing bytes after message type %d", len(data)-r.off, m.msgType())
	}
	return nil
}

// codec is the gRPC codec of the device service; it counts the bytes it
// encodes and decodes (the messages' payloads on the wire).
type codec struct {
	out, in atomic.Int64
	// defer (server side): a decode failure is recorded for the handler,
	// which reports it as InvalidArgument (gRPC would say Internal).
	deferErrs bool
	errs      sync.Map // message → error
}

// decodeErr returns and forgets the decode failure recorded for m.
func (c *codec) decodeErr(m any) error {
	if e, ok := c.errs.LoadAndDelete(m); ok {
		return e.(error)
	}
	return nil
}

// CodecName is the gRPC content subtype of the device service.
const CodecName = "rosemary-device-v1"

func (*codec) Name() string { return CodecName }

func (c *codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(message)
	if !ok {
		return nil, fmt.Errorf("device: codec cannot marshal %T", v)
	}
	b, err := marshal(m)
	if err != nil {
		return nil, err
	}
	c.out.Add(int64(len(b)))
	return b, nil
}

func (c *codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(message)
	if !ok {
		return fmt.Errorf("device: codec cannot unmarshal into %T", v)
	}
	c.in.Add(int64(len(data)))
	err := unmarshal(data, m)
	if err != nil && c.deferErrs {
		c.errs.Store(m, err)
		return nil
	}
	return err
}

var errNoLimbs = errors.New("no limbs")

// limbBytes is the payload size of limbs.
func limbBytes(l [][]uint64) int64 {
	if len(l) == 0 {
		return 0
	}
	return int64(len(l)) * int64(len(l[0])) * 8
}

func checkU32(v int, what string) error {
	if v < 0 || v > math.MaxUint32 {
		return fmt.Errorf("device: %s %d out of range", what, v)
	}
	return nil
}
