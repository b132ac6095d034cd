package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame format constants.
const (
	// Magic opens every frame.
	Magic = "RMPC"
	// Version is the frame format version this package speaks.
	Version = 1
	// HeaderSize is the size of a frame header in bytes.
	HeaderSize = 10
	// DefaultMaxPayload is the payload limit of a Conn unless configured
	// otherwise (256 MiB: a batch of a few thousand ciphertexts at N = 8192).
	DefaultMaxPayload = 256 << 20
)

// Sentinel errors wrapped by *FrameError.
var (
	ErrBadMagic   = errors.New("bad magic")
	ErrBadVersion = errors.New("unsupported version")
	ErrBadType    = errors.New("bad frame type")
	ErrTooLarge   = errors.New("frame too large")
	ErrTruncated  = errors.New("truncated frame")
)

// FrameError describes a malformed frame.
type FrameError struct {
	Err    error  // one of the sentinel errors above
	Detail string // human-readable specifics
}

func (e *FrameError) Error() string { return "transport: " + e.Err.Error() + ": " + e.Detail }

// Unwrap returns the sentinel error.
func (e *FrameError) Unwrap() error { return e.Err }

// Frame is one decoded message.
type Frame struct {
	Type    byte
	Payload []byte
}

// AppendFrame appends the encoding of a frame to dst. It fails if typ is 0 or
// the payload is longer than maxPayload.
func AppendFrame(dst []byte, typ byte, payload []byte, maxPayload uint32) ([]byte, error) {
	if typ == 0 {
		return dst, &FrameError{ErrBadType, "type 0 is reserved"}
	}
	if uint64(len(payload)) > uint64(maxPayload) {
		return dst, &FrameError{ErrTooLarge, fmt.Sprintf("payload of %d bytes exceeds limit %d", len(payload), maxPayload)}
	}
	dst = append(dst, Magic...)
	dst = append(dst, Version, typ)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...), nil
}

// parseHeader validates a header and returns the type and payload length.
func parseHeader(h []byte, maxPayload uint32) (byte, uint32, error) {
	if string(h[0:4]) != Magic {
		return 0, 0, &FrameError{ErrBadMagic, fmt.Sprintf("got %q, want %q", h[0:4], Magic)}
	}
	if h[4] != Version {
		return 0, 0, &FrameError{ErrBadVersion, fmt.Sprintf("got version %d, want %d", h[4], Version)}
	}
	if h[5] == 0 {
		return 0, 0, &FrameError{ErrBadType, "type 0 is reserved"}
	}
	n := binary.BigEndian.Uint32(h[6:10])
	if n > maxPayload {
		return 0, 0, &FrameError{ErrTooLarge, fmt.Sprintf("declared payload of %d bytes exceeds limit %d", n, maxPayload)}
	}
	return h[5], n, nil
}

// DecodeFrame decodes the frame at the start of b and returns it together with
// the bytes that follow it. The payload aliases b.
func DecodeFrame(b []byte, maxPayload uint32) (Frame, []byte, error) {
	if len(b) < HeaderSize {
		return Frame{}, nil, &FrameError{ErrTruncated, fmt.Sprintf("header needs %d bytes, have %d", HeaderSize, len(b))}
	}
	typ, n, err := parseHeader(b[:HeaderSize], maxPayload)
	if err != nil {
		return Frame{}, nil, err
	}
	rest := b[HeaderSize:]
	if uint64(len(rest)) < uint64(n) {
		return Frame{}, nil, &FrameError{ErrTruncated, fmt.Sprintf("payload needs %d bytes, have %d", n, len(rest))}
	}
	return Frame{Type: typ, Payload: rest[:n:n]}, rest[n:], nil
}

// ReadFrame reads one frame from r. The length is checked against maxPayload
// before the payload buffer is allocated. A stream that ends cleanly before
// the first header byte yields io.EOF; one that ends inside a frame yields a
// FrameError wrapping ErrTruncated.
func ReadFrame(r io.Reader, maxPayload uint32) (Frame, error) {
	var h [HeaderSize]byte
	if k, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return Frame{}, &FrameError{ErrTruncated, fmt.Sprintf("stream ended after %d of %d header bytes", k, HeaderSize)}
		}
		return Frame{}, fmt.Errorf("transport: read header: %w", err)
	}
	typ, n, err := parseHeader(h[:], maxPayload)
	if err != nil {
		return Frame{}, err
	}
	// Grow the buffer as bytes arrive, so a peer that declares a large frame
	// and sends nothing costs at most one chunk of memory.
	const chunk = 1 << 20
	p := make([]byte, 0, min(int(n), chunk))
	for len(p) < int(n) {
		want := min(int(n)-len(p), chunk)
		p = append(p, make([]byte, want)...)
		k, err := io.ReadFull(r, p[len(p)-want:])
		if err != nil {
			got := len(p) - want + k
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return Frame{}, &FrameError{ErrTruncated, fmt.Sprintf("stream ended after %d of %d payload bytes", got, n)}
			}
			return Frame{}, fmt.Errorf("transport: read payload: %w", err)
		}
	}
	return Frame{Type: typ, Payload: p}, nil
}
