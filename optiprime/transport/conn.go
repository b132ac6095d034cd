package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Role says which end of the session a Conn is; it decides which byte counter
// a sent frame goes to.
type Role int

// The two roles.
const (
	Client Role = iota
	Server
)

func (r Role) String() string {
	switch r {
	case Client:
		return "client"
	case Server:
		return "server"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Stats are the traffic counters of one Conn, headers included.
type Stats struct {
	BytesC2S uint64 `json:"bytes_c2s"` // bytes sent client → server
	BytesS2C uint64 `json:"bytes_s2c"` // bytes sent server → client
	Frames   uint64 `json:"frames"`    // frames sent plus received
	Flights  uint64 `json:"flights"`   // maximal one-direction runs of frames
}

// Rounds returns the number of round trips, ceil(Flights/2).
func (s Stats) Rounds() uint64 { return (s.Flights + 1) / 2 }

// MarshalJSON adds the derived "rounds" to the counters.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	return json.Marshal(struct {
		plain
		Rounds uint64 `json:"rounds"`
	}{plain(s), s.Rounds()})
}

// Sub returns s - o, counter by counter; use it to measure one protocol step
// between two snapshots.
func (s Stats) Sub(o Stats) Stats {
	return Stats{s.BytesC2S - o.BytesC2S, s.BytesS2C - o.BytesS2C, s.Frames - o.Frames, s.Flights - o.Flights}
}

type phase int

const (
	idle phase = iota
	sending
	receiving
	exchanging
)

// Conn is a framed, counted connection. Send and Recv may be called from
// different goroutines at the same time; two concurrent Sends (or Recvs) are
// serialized.
type Conn struct {
	rwc        io.ReadWriteCloser
	br         *bufio.Reader
	role       Role
	maxPayload uint32
	idle       time.Duration // WithIdleTimeout; 0: none
	delay      time.Duration // WithDelay; 0: none
	w          io.Writer     // where frames go: rwc, or the delay queue
	dq         *delayed      // WithDelay's queue; nil without

	smu sync.Mutex // serializes writes
	rmu sync.Mutex // serializes reads

	mu    sync.Mutex // guards stats and ph
	stats Stats
	ph    phase

	recvWait atomic.Int64 // nanoseconds spent in recv (blocked on the peer, then reading)
}

// Option configures a Conn.
type Option func(*Conn)

// WithMaxPayload sets the largest payload the Conn sends or accepts.
func WithMaxPayload(n uint32) Option { return func(c *Conn) { c.maxPayload = n } }

// NewConn wraps a byte stream. The Conn owns rwc and closes it on Close.
func NewConn(rwc io.ReadWriteCloser, role Role, opts ...Option) *Conn {
	c := &Conn{rwc: rwc, role: role, maxPayload: DefaultMaxPayload}
	for _, o := range opts {
		o(c)
	}
	if nc, ok := rwc.(net.Conn); ok && c.idle > 0 {
		c.rwc = &idleConn{Conn: nc, d: c.idle}
	}
	c.br = bufio.NewReaderSize(c.rwc, 64<<10)
	c.w = c.rwc
	if c.delay > 0 {
		c.dq = newDelayed(c.rwc, c.delay)
		c.w = c.dq
	}
	return c
}

// Role returns the role given at construction.
func (c *Conn) Role() Role { return c.role }

// MaxPayload returns the payload limit.
func (c *Conn) MaxPayload() uint32 { return c.maxPayload }

// Stats returns a snapshot of the counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close closes the underlying stream (with WithDelay, after the frames
// still queued have been written).
func (c *Conn) Close() error {
	if c.dq != nil {
		c.dq.close()
	}
	return c.rwc.Close()
}

func (c *Conn) enter(p phase) {
	c.mu.Lock()
	if c.ph != p || p == exchanging {
		c.stats.Flights++
	}
	c.ph = p
	c.mu.Unlock()
}

func (c *Conn) countSent(n int) {
	c.mu.Lock()
	if c.role == Client {
		c.stats.BytesC2S += uint64(n)
	} else {
		c.stats.BytesS2C += uint64(n)
	}
	c.stats.Frames++
	c.mu.Unlock()
}

func (c *Conn) countRecv(n int) {
	c.mu.Lock()
	if c.role == Client {
		c.stats.BytesS2C += uint64(n)
	} else {
		c.stats.BytesC2S += uint64(n)
	}
	c.stats.Frames++
	c.mu.Unlock()
}

// coalesce is the largest payload sent in one write with its header (a
// TLS record's plaintext).
const coalesce = 16 << 10

// Send writes one frame.
func (c *Conn) Send(typ byte, payload []byte) error {
	c.enter(sending)
	return c.send(typ, payload)
}

func (c *Conn) send(typ byte, payload []byte) error {
	if typ == 0 {
		return &FrameError{ErrBadType, "type 0 is reserved"}
	}
	if uint64(len(payload)) > uint64(c.maxPayload) {
		return &FrameError{ErrTooLarge, fmt.Sprintf("payload of %d bytes exceeds limit %d", len(payload), c.maxPayload)}
	}
	hdr := make([]byte, HeaderSize)
	copy(hdr, Magic)
	hdr[4], hdr[5] = Version, typ
	binary.BigEndian.PutUint32(hdr[6:], uint32(len(payload)))
	c.smu.Lock()
	defer c.smu.Unlock()
	bufs := net.Buffers{hdr, payload}
	if len(payload) <= coalesce {
		// One write: one TLS record, one segment, rather than two.
		bufs = net.Buffers{append(hdr, payload...)}
	}
	if _, err := bufs.WriteTo(c.w); err != nil {
		return fmt.Errorf("transport: send frame type %d (%d bytes): %w", typ, len(payload), err)
	}
	c.countSent(HeaderSize + len(payload))
	return nil
}

// Recv reads one frame.
func (c *Conn) Recv() (Frame, error) {
	c.enter(receiving)
	return c.recv()
}

// RecvWait returns the wall time spent so far receiving frames (Recv,
// RecvType, Exchange's receive): waiting for the peer to send, then reading
// the frame. A party that computes nothing while it receives spends this
// time idle; a profile subtracts it to find its own work.
func (c *Conn) RecvWait() time.Duration { return time.Duration(c.recvWait.Load()) }

func (c *Conn) recv() (Frame, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	t0 := time.Now()
	f, err := ReadFrame(c.br, c.maxPayload)
	c.recvWait.Add(int64(time.Since(t0)))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Frame{}, fmt.Errorf("transport: peer closed the connection: %w", err)
		}
		return Frame{}, err
	}
	c.countRecv(HeaderSize + len(f.Payload))
	return f, nil
}

// RecvType reads one frame and fails unless it has type want.
func (c *Conn) RecvType(want byte) ([]byte, error) {
	f, err := c.Recv()
	if err != nil {
		return nil, err
	}
	if f.Type != want {
		return nil, fmt.Errorf("transport: got frame type %d, want %d", f.Type, want)
	}
	return f.Payload, nil
}

// Exchange sends a frame and, concurrently, receives one of the same type from
// the peer, which must call Exchange too. It counts as one flight, because
// both messages travel at the same time; sending concurrently also avoids the
// deadlock of two peers blocking on full socket buffers.
func (c *Conn) Exchange(typ byte, payload []byte) ([]byte, error) {
	c.enter(exchanging)
	errc := make(chan error, 1)
	go func() { errc <- c.send(typ, payload) }()
	f, rerr := c.recv()
	serr := <-errc
	if serr != nil {
		return nil, serr
	}
	if rerr != nil {
		return nil, rerr
	}
	if f.Type != typ {
		return nil, fmt.Errorf("transport: exchange got frame type %d, want %d", f.Type, typ)
	}
	return f.Payload, nil
}

// Dial connects to a server over TCP and returns the client end.
func Dial(ctx context.Context, addr string, opts ...Option) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	return NewConn(nc, Client, opts...), nil
}

// Accept waits for one client on l and returns the server end.
func Accept(l net.Listener, opts ...Option) (*Conn, error) {
	nc, err := l.Accept()
	if err != nil {
		return nil, fmt.Errorf("transport: accept on %s: %w", l.Addr(), err)
	}
	return NewConn(nc, Server, opts...), nil
}

// SetDeadline sets the read and write deadline of the underlying stream, if
// it supports deadlines (TCP does; Pipe does not). A zero time clears it.
func (c *Conn) SetDeadline(t time.Time) error {
	d, ok := c.rwc.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return errors.New("transport: this stream has no deadlines")
	}
	if err := d.SetDeadline(t); err != nil {
		return fmt.Errorf("transport: set deadline: %w", err)
	}
	return nil
}
