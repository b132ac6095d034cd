package transport

import (
	"errors"
	"io"
	"sync"
)

// Pipe returns a connected client/server pair over an in-memory stream with
// unbounded buffering: writes never block, reads block until data arrive or
// the peer closes. Frames pass through the same encoder and decoder as on TCP.
func Pipe(opts ...Option) (client, server *Conn) {
	a, b := newBuf(), newBuf()
	return NewConn(&pipeEnd{r: a, w: b}, Client, opts...), NewConn(&pipeEnd{r: b, w: a}, Server, opts...)
}

var errClosedPipe = errors.New("transport: write on closed pipe")

type pipeBuf struct {
	mu     sync.Mutex
	cond   *sync.Cond
	data   []byte
	closed bool
}

func newBuf() *pipeBuf {
	b := &pipeBuf{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *pipeBuf) read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.data) == 0 && !b.closed {
		b.cond.Wait()
	}
	if len(b.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	if len(b.data) == 0 {
		b.data = nil // let the backing array go
	}
	return n, nil
}

func (b *pipeBuf) write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errClosedPipe
	}
	b.data = append(b.data, p...)
	b.cond.Broadcast()
	return len(p), nil
}

func (b *pipeBuf) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

type pipeEnd struct{ r, w *pipeBuf }

func (e *pipeEnd) Read(p []byte) (int, error)  { return e.r.read(p) }
func (e *pipeEnd) Write(p []byte) (int, error) { return e.w.write(p) }

// Close ends both directions: the peer reads EOF after draining, and the
// peer's writes fail.
func (e *pipeEnd) Close() error {
	e.w.close()
	e.r.close()
	return nil
}
