// Package wire is what the HE-MPC session protocols (infer, e2e) share on a
// transport connection: the client's opening hello, and giving up or
// expecting a frame with the protocol's own abort frame type.
//
// A hello starts with three bytes, the same in every protocol:
//
//	offset size field
//	0      1    version  (the protocol's wire version)
//	1      1    protocol (a linear.Protocol)
//	2      1    log N    (12..15)
//	3      n    the protocol's own fields (e2e: a 32-byte architecture digest)
package wire

import (
	"fmt"

	"github.com/rosemary-fhe/rosemary/optiprime/linear"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// HelloLen is the length of the fields every hello starts with.
const HelloLen = 3

// Hello is the client's opening message: the linear protocol and the ring
// degree both parties derive their plans from.
type Hello struct {
	Version  byte
	Protocol linear.Protocol
	LogN     int
}

// Append appends the hello's HelloLen bytes to dst.
func (h Hello) Append(dst []byte) []byte {
	return append(dst, h.Version, byte(h.Protocol), byte(h.LogN))
}

// Session names one protocol on the connection. Name prefixes its errors,
// which also reach the peer as abort reasons, so it is part of the wire
// format.
type Session struct {
	Name      string // "infer", "e2e"
	Version   byte   // the wire version a hello must carry
	AbortType byte   // the frame type that carries an abort reason
}

// Hello returns the hello of this session's version for the given choice.
func (s Session) Hello(p linear.Protocol, logN int) Hello {
	return Hello{Version: s.Version, Protocol: p, LogN: logN}
}

// ParseHello parses and checks a hello of exactly HelloLen+extra bytes and
// returns it with its extra bytes (aliasing b).
func (s Session) ParseHello(b []byte, extra int) (Hello, []byte, error) {
	if len(b) != HelloLen+extra {
		return Hello{}, nil, fmt.Errorf("%s: hello has %d bytes, want %d", s.Name, len(b), HelloLen+extra)
	}
	h := Hello{Version: b[0], Protocol: linear.Protocol(b[1]), LogN: int(b[2])}
	if h.Version != s.Version {
		return Hello{}, nil, fmt.Errorf("%s: protocol version %d, want %d", s.Name, h.Version, s.Version)
	}
	if !h.Protocol.Valid() {
		return Hello{}, nil, fmt.Errorf("%s: unknown linear protocol %d", s.Name, b[1])
	}
	if h.LogN < 12 || h.LogN > 15 {
		return Hello{}, nil, fmt.Errorf("%s: log N = %d outside [12, 15]", s.Name, h.LogN)
	}
	return h, b[HelloLen:], nil
}

// Abort tells the peer why this side stops (best effort) and closes conn.
func (s Session) Abort(conn *transport.Conn, err error) { conn.Abort(s.AbortType, err) }

// Recv reads a frame of the wanted type; a peer's abort becomes an error.
func (s Session) Recv(conn *transport.Conn, want byte) ([]byte, error) {
	return conn.RecvWant(want, s.AbortType)
}
