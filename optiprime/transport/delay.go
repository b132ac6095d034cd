package transport

import (
	"io"
	"sync"
	"time"
)

// WithDelay delays every frame this Conn sends by d before it reaches the
// stream: a one-way propagation delay injected in the transport, for
// measuring a session over a long link on a machine whose kernel cannot
// shape delay (no sch_netem). The sender does not wait: its frames queue,
// stamped with their send time, and a writer puts each on the stream d
// after it, in order — so a party computes while its frames travel, as over
// a real link, and a round trip costs 2d when both ends use it. Bandwidth is
// not shaped here. Close delivers the frames still queued first.
func WithDelay(d time.Duration) Option { return func(c *Conn) { c.delay = d } }

// delayed is the queue and writer of WithDelay.
type delayed struct {
	d    time.Duration
	w    io.Writer
	mu   sync.Mutex
	q    []delayedFrame
	wake chan struct{} // a frame was queued or the queue closed
	done chan struct{} // the writer has ended
	err  error         // the first write error, reported by later Writes
	shut bool
}

type delayedFrame struct {
	due time.Time
	b   []byte
}

func newDelayed(w io.Writer, d time.Duration) *delayed {
	q := &delayed{d: d, w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// Write queues a copy of b, due d from now.
func (q *delayed) Write(b []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return 0, q.err
	}
	if q.shut {
		return 0, io.ErrClosedPipe
	}
	q.q = append(q.q, delayedFrame{time.Now().Add(q.d), append([]byte(nil), b...)})
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (q *delayed) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		if len(q.q) == 0 {
			shut := q.shut
			q.mu.Unlock()
			if shut {
				return
			}
			<-q.wake
			continue
		}
		f := q.q[0]
		q.q = q.q[1:]
		q.mu.Unlock()
		time.Sleep(time.Until(f.due))
		if _, err := q.w.Write(f.b); err != nil {
			q.mu.Lock()
			q.err = err
			q.q = nil
			q.mu.Unlock()
			return
		}
	}
}

// close stops taking frames and waits until the queued ones are written
// (or a write failed).
func (q *delayed) close() {
	q.mu.Lock()
	q.shut = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}
