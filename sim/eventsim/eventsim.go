package eventsim

import (
	"errors"
	"fmt"
	"math"
)

// Time is simulated time in picoseconds.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Never is a time later than any reachable simulated time.
const Never Time = math.MaxInt64

// Seconds converts t to seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

func (t Time) String() string { return fmt.Sprintf("%.6fus", float64(t)/float64(Microsecond)) }

// FromNanoseconds converts a (possibly fractional) nanosecond value to Time,
// rounding to the nearest picosecond. Negative or non-finite inputs return 0
// and false.
func FromNanoseconds(ns float64) (Time, bool) {
	ps := ns * 1000
	if ps != ps || ps < 0 || ps > float64(math.MaxInt64/2) {
		return 0, false
	}
	return Time(math.Round(ps)), true
}

// Event is a scheduled callback. It is returned by Sim.At/After so it can be
// cancelled.
type Event struct {
	at    Time
	seq   uint64
	fn    func()
	index int // position in the heap, -1 once fired or cancelled
}

// Time is when the event fires (or would have fired).
func (e *Event) Time() Time { return e.at }

// Pending reports whether the event is still scheduled.
func (e *Event) Pending() bool { return e != nil && e.index >= 0 }

// Sim is a discrete-event simulator. The zero value is not usable; call New.
type Sim struct {
	now   Time
	seq   uint64
	heap  []*Event
	fired uint64
	err   error
}

// New returns an empty simulator at time 0.
func New() *Sim { return &Sim{} }

// Now is the current simulated time.
func (s *Sim) Now() Time { return s.now }

// Fired is the number of events executed so far (the "sim_events" figure).
func (s *Sim) Fired() uint64 { return s.fired }

// Pending is the number of scheduled events.
func (s *Sim) Pending() int { return len(s.heap) }

// Err is the first model error recorded (e.g. scheduling in the past).
func (s *Sim) Err() error { return s.err }

// Fail records a model error; Run stops at the next event and returns it.
func (s *Sim) Fail(err error) {
	if s.err == nil && err != nil {
		s.err = err
	}
}

// At schedules fn at absolute time t. Ties fire in scheduling order.
// Scheduling before Now records an error and returns nil.
func (s *Sim) At(t Time, fn func()) *Event {
	if t < s.now {
		s.Fail(fmt.Errorf("des: event scheduled at %v, before now %v", t, s.now))
		return nil
	}
	if fn == nil {
		s.Fail(errors.New("des: nil event function"))
		return nil
	}
	e := &Event{at: t, seq: s.seq, fn: fn, index: len(s.heap)}
	s.seq++
	s.heap = append(s.heap, e)
	s.up(e.index)
	return e
}

// After schedules fn d after Now.
func (s *Sim) After(d Time, fn func()) *Event {
	if d < 0 {
		s.Fail(fmt.Errorf("des: negative delay %d ps", d))
		return nil
	}
	if d > Never-s.now {
		s.Fail(fmt.Errorf("des: delay %d ps overflows simulated time", d))
		return nil
	}
	return s.At(s.now+d, fn)
}

// Cancel removes a pending event; it reports whether it was pending.
func (s *Sim) Cancel(e *Event) bool {
	if e == nil || e.index < 0 || e.index >= len(s.heap) || s.heap[e.index] != e {
		return false
	}
	i := e.index
	last := len(s.heap) - 1
	if i != last {
		s.swap(i, last)
	}
	s.heap[last] = nil
	s.heap = s.heap[:last]
	if i != last {
		if !s.down(i) {
			s.up(i)
		}
	}
	e.index = -1
	e.fn = nil
	return true
}

// Step fires the next event; it returns false when none is left or an error
// has been recorded.
func (s *Sim) Step() bool {
	if len(s.heap) == 0 || s.err != nil {
		return false
	}
	e := s.pop()
	s.now = e.at
	fn := e.fn
	e.fn = nil
	s.fired++
	fn()
	return true
}

// Run fires events until none is left; it returns the recorded error, if any.
func (s *Sim) Run() error {
	for s.Step() {
	}
	return s.err
}

// RunUntil fires every event with time <= t, then sets Now to t (if t is
// later). Events after t stay scheduled.
func (s *Sim) RunUntil(t Time) error {
	for len(s.heap) > 0 && s.heap[0].at <= t && s.err == nil {
		s.Step()
	}
	if s.err == nil && t > s.now {
		s.now = t
	}
	return s.err
}

func (s *Sim) less(i, j int) bool {
	a, b := s.heap[i], s.heap[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (s *Sim) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.heap[i].index = i
	s.heap[j].index = j
}

func (s *Sim) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !s.less(j, i) {
			break
		}
		s.swap(i, j)
		j = i
	}
}

func (s *Sim) down(i0 int) bool {
	i, n := i0, len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && s.less(r, l) {
			j = r
		}
		if !s.less(j, i) {
			break
		}
		s.swap(i, j)
		i = j
	}
	return i > i0
}

func (s *Sim) pop() *Event {
	last := len(s.heap) - 1
	s.swap(0, last)
	e := s.heap[last]
	s.heap[last] = nil
	s.heap = s.heap[:last]
	if last > 0 {
		s.down(0)
	}
	e.index = -1
	return e
}
