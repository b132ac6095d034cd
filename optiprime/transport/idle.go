package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// ErrIdle is returned when the peer sent nothing, or took nothing, for the
// Conn's idle timeout.
var ErrIdle = errors.New("transport: peer idle past the deadline")

// idleChunk is the most one deadline covers when writing: a large frame on
// a slow link keeps its session while bytes move.
const idleChunk = 1 << 20

// WithIdleTimeout bounds every read and every write of the Conn's stream
// (a net.Conn; an in-memory Pipe has no deadlines and ignores it) to d, so
// that a peer that stalls cannot hold a session for ever. Each read of the
// stream and each chunk of a write gets a deadline of its own: the limit is
// on silence, not on a frame's length. It replaces deadlines set with
// SetDeadline.
func WithIdleTimeout(d time.Duration) Option { return func(c *Conn) { c.idle = d } }

// idleConn sets a read or write deadline before each operation on the
// stream.
type idleConn struct {
	net.Conn
	d time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.d)); err != nil {
		return 0, fmt.Errorf("transport: set read deadline: %w", err)
	}
	n, err := c.Conn.Read(p)
	return n, c.idleErr(err)
}

func (c *idleConn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), idleChunk)
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.d)); err != nil {
			return n, fmt.Errorf("transport: set write deadline: %w", err)
		}
		m, err := c.Conn.Write(p[:k])
		n += m
		if err != nil {
			return n, c.idleErr(err)
		}
		p = p[k:]
	}
	return n, nil
}

func (c *idleConn) idleErr(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w (%v): %w", ErrIdle, c.d, err)
	}
	return err
}
