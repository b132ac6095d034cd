package admit

import "time"

// Narrowing: while callers share the cores, Cores grants no more of them
// than the operating system gives the process (see Cores).
const (
	// narrowWindow is how often the process's threads' CPU is read.
	narrowWindow = 100 * time.Millisecond
	// contended: the threads waited runnable for a CPU at least
	// 1/contendedShare of the time they were runnable.
	contendedShare = 4
	// widenAfter calm windows (no contention) give back one grant: a
	// probe, taken back within a window if the host is still short.
	widenAfter = 10
)

// narrow reads the threads' CPU once a window (one small file per thread,
// about 0.1 ms, under mu ten times a second) and sets the limit: all n
// grants for a lone caller; while callers share, as many as the process
// got if its threads waited for a CPU, one more after widenAfter calm
// windows (mu held).
func (c *Cores) narrow(now time.Time) {
	if c.sample == nil || now.Sub(c.sampledAt) < narrowWindow {
		return
	}
	s, ok := c.sample()
	if !ok {
		return
	}
	prev, last := c.sampledAt, c.last
	c.sampledAt, c.last = now, s
	if prev.IsZero() {
		return
	}
	dt, run, wait := now.Sub(prev), s.run-last.run, s.wait-last.wait
	switch {
	case !c.shared():
		c.calm = 0
		c.setLimit(c.n, now)
	case run > 0 && contendedShare*wait >= run+wait:
		c.calm = 0
		got := int((run + dt/2) / dt) // cores the process ran on, rounded
		if got = min(max(got, 1), c.n); got < c.limit {
			c.setLimit(got, now)
		}
	case c.limit < c.n:
		if c.calm++; c.calm >= widenAfter {
			c.calm = 0
			c.setLimit(c.limit+1, now)
		}
	}
}

// shared reports whether two callers or more hold or wait for cores (mu
// held).
func (c *Cores) shared() bool {
	names := len(c.callers)
	for name := range c.holding {
		if c.callers[name] == nil {
			names++
		}
	}
	return names > 1
}

// setLimit grants m cores from now on: more hands cores to waiting runs
// at once, fewer lets chunks holding one finish and retires their cores
// as they are given back (mu held).
func (c *Cores) setLimit(m int, now time.Time) {
	c.free += m - c.limit
	c.limit = m
	for c.free > 0 && c.next() != nil {
		c.free--
		c.handOff(now)
	}
}
