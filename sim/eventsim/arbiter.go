package eventsim

import "fmt"

// Arbiter is a work-conserving resource that serves one job at a time and,
// whenever it becomes free, starts the oldest job of the highest-priority
// class waiting (class 0 first). Unlike Server, which books requests in
// submission order, an Arbiter lets a short high-priority job (e.g. a flash
// command) overtake queued low-priority ones (data transfers). It costs one
// event per job.
type Arbiter struct {
	sim     *Sim
	name    string
	rate    Rate
	classes []FIFO[job]
	busy    bool
	started Time
	st      Stats
}

type job struct {
	d     Time
	bytes int64
	done  func()
}

// NewArbiter returns an arbiter with the given number of priority classes
// (at least 1) and rate (may be zero if only durations are submitted).
func NewArbiter(sim *Sim, name string, classes int, rate Rate) *Arbiter {
	if classes < 1 {
		classes = 1
	}
	return &Arbiter{sim: sim, name: name, rate: rate, classes: make([]FIFO[job], classes)}
}

// Name is the arbiter's name.
func (a *Arbiter) Name() string { return a.name }

// Rate is the arbiter's bandwidth.
func (a *Arbiter) Rate() Rate { return a.rate }

// Stats returns the counters.
func (a *Arbiter) Stats() Stats { return a.st }

// Busy reports whether a job is in service.
func (a *Arbiter) Busy() bool { return a.busy }

// Submit queues a job of duration d (carrying bytes for the counters) in
// class; done is called when it completes.
func (a *Arbiter) Submit(class int, d Time, bytes int64, done func()) {
	if class < 0 || class >= len(a.classes) {
		a.sim.Fail(fmt.Errorf("des: %s: class %d out of range 0..%d", a.name, class, len(a.classes)-1))
		return
	}
	if d < 0 || bytes < 0 {
		a.sim.Fail(fmt.Errorf("des: %s: negative job (%d ps, %d bytes)", a.name, d, bytes))
		return
	}
	a.classes[class].Push(job{d: d, bytes: bytes, done: done})
	if !a.busy {
		a.next()
	}
}

// SubmitBytes queues a transfer of n bytes at the arbiter's rate.
func (a *Arbiter) SubmitBytes(class int, n int64, done func()) {
	if !a.rate.Valid() {
		a.sim.Fail(fmt.Errorf("des: %s: transfer on an arbiter without a rate", a.name))
		return
	}
	a.Submit(class, a.rate.Duration(n), n, done)
}

func (a *Arbiter) next() {
	for c := range a.classes {
		if a.classes[c].Empty() {
			continue
		}
		j := a.classes[c].Pop()
		a.busy = true
		a.started = a.sim.now
		a.st.Requests++
		a.st.Bytes += j.bytes
		a.sim.After(j.d, func() {
			a.st.Busy += a.sim.now - a.started
			a.busy = false
			if j.done != nil {
				j.done()
			}
			if !a.busy {
				a.next()
			}
		})
		return
	}
}
