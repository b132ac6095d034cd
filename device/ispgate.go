package device

import (
	"sync"
	"time"
)

// defaultWriteWait is Limits.WriteWait when unset: long enough that a
// write does not break up a burst of runs, short enough that a delta
// update lands within a lookup or two under steady queries.
const defaultWriteWait = 50 * time.Millisecond

// ispGate keeps conventional writes out of ISP mode. It prefers the runs,
// for a bounded time: a write waiting for the running jobs to end does not
// hold back new ones (with a sync.RWMutex, one pending Put froze every
// query behind the longest running scan), but once the oldest waiting
// write has waited longer than bound, new runs wait behind it until it is
// in; the runs already going finish first. Without the bound a write
// starved while clients queried without pause (a compaction of 1M keys
// took 30 minutes under two looping clients). Runs wait for the writes in
// progress.
//
// Writes go together: the store writes objects side by side (it
// serializes only its catalog edits and the writers of one object), so a
// write waits for no other write, only for the runs — an update's small
// writes used to queue behind a compaction's 16 MiB tiles, each holding
// the gate while it was written and fsynced. A write joins those in
// progress only while no run waits for them: the runs get their turn once
// the writes in progress end.
type ispGate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	bound   time.Duration    // how long a waiting write lets new runs pass
	now     func() time.Time // the clock (tests step it by hand)
	running int              // jobs in ISP mode
	writing int              // writes in progress
	// Waiting writes go in turn: queue holds their arrival times, the
	// front the next to go; a write's ticket is its place in that order.
	queue           []time.Time
	served, tickets uint64
	heldRuns        int // runs waiting for the writes (tests observe it)
}

func newISPGate(bound time.Duration) *ispGate {
	if bound <= 0 {
		bound = defaultWriteWait
	}
	g := &ispGate{bound: bound, now: time.Now}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// overdue reports whether the next write has waited past the bound (g.mu
// held).
func (g *ispGate) overdue() bool {
	return len(g.queue) > 0 && g.now().Sub(g.queue[0]) > g.bound
}

func (g *ispGate) enter() {
	g.mu.Lock()
	held := false
	for g.writing > 0 || g.overdue() {
		if !held {
			held = true
			g.heldRuns++
		}
		g.cond.Wait()
	}
	if held {
		g.heldRuns--
	}
	g.running++
	g.mu.Unlock()
}

func (g *ispGate) leave() {
	g.mu.Lock()
	g.running--
	if g.running == 0 {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

func (g *ispGate) lock() {
	g.mu.Lock()
	ticket := g.tickets
	g.tickets++
	g.queue = append(g.queue, g.now())
	for g.running > 0 || (g.writing > 0 && g.heldRuns > 0) || g.served != ticket {
		g.cond.Wait()
	}
	g.queue = g.queue[1:]
	g.served++
	g.writing++
	// The next waiting write may go too.
	g.cond.Broadcast()
	g.mu.Unlock()
}

func (g *ispGate) unlock() {
	g.mu.Lock()
	if g.writing--; g.writing == 0 {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}
