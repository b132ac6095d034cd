package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Session helpers shared by the protocols built on Conn: giving up with a
// reason, expecting a frame type, and numbered frames of a sequence.

// MaxReasonLen bounds the reason carried by an abort frame.
const MaxReasonLen = 1 << 10

// Abort sends the peer a frame of type typ carrying why this side stops
// (best effort, at most MaxReasonLen bytes), then closes the connection.
func (c *Conn) Abort(typ byte, err error) {
	msg := err.Error()
	if len(msg) > MaxReasonLen {
		msg = msg[:MaxReasonLen]
	}
	_ = c.Send(typ, []byte(msg))
	_ = c.Close()
}

// RecvWant reads the next frame, which must be of type want; a frame of
// type abortType becomes an error quoting the peer's reason.
func (c *Conn) RecvWant(want, abortType byte) ([]byte, error) {
	f, err := c.Recv()
	if err != nil {
		return nil, err
	}
	if f.Type == abortType && want != abortType {
		r := f.Payload
		if len(r) > MaxReasonLen {
			r = r[:MaxReasonLen]
		}
		return nil, fmt.Errorf("transport: peer aborted: %q", r)
	}
	if f.Type != want {
		return nil, fmt.Errorf("transport: frame type %#x, want %#x", f.Type, want)
	}
	return f.Payload, nil
}

// AppendIndexed appends item idx of a sequence of total items: u32 index,
// u32 total (big endian), then the payload.
func AppendIndexed(dst []byte, idx, total int, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(idx))
	dst = binary.BigEndian.AppendUint32(dst, uint32(total))
	return append(dst, payload...)
}

// ParseIndexed splits an AppendIndexed frame (the payload aliases b). The
// total must not exceed maxTotal and the index must be below it.
func ParseIndexed(b []byte, maxTotal int) (idx, total int, payload []byte, err error) {
	if len(b) < 8 {
		return 0, 0, nil, errors.New("transport: indexed frame truncated")
	}
	i, t := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if uint64(t) > uint64(maxTotal) || i >= t {
		return 0, 0, nil, fmt.Errorf("transport: item %d of %d out of range (at most %d)", i, t, maxTotal)
	}
	return int(i), int(t), b[8:], nil
}
