package admit

import (
	"context"
	"math"
	"sync"
	"time"
)

// Cores shares a device's cores between callers chunk by chunk. Queue
// admits whole runs; once two runs go at once, each would start all its
// workers and the Go scheduler would split the cores by goroutine, so a
// caller looping large scans (a run's workers, read-ahead and hint stage)
// takes most of them from another's small query. Instead every worker of
// every run takes a core from Cores for each chunk of work (a tile block,
// a body of a stream program, an object read) and gives it back after, so
// at most n chunks run at once.
//
// Which waiting caller gets a freed core: the one that used the cores
// least lately — a caller's usage is the core-seconds its chunks held,
// decayed with a half-life (HalfLife) — ties going to the caller served
// longest ago. Callers that keep competing converge to equal shares
// (their usages equalise, after which grants alternate); a caller that
// was idle while another looped gets the cores first until its recent
// usage catches up, so a short query beside a long scan runs at nearly
// its speed alone while the long scan loses little. A caller's waiting
// workers are served first in, first out.
type Cores struct {
	n        int
	halfLife time.Duration
	now      func() time.Time // the clock (tests freeze or step it)

	mu      sync.Mutex
	free    int // cores not held; > 0 only while nobody waits
	callers map[string]*coreUser
	seq     uint64 // grants so far: the order callers were last served in
}

// HalfLife is how fast a caller's past use of the cores stops counting.
// A caller that keeps a core busy settles at HalfLife/ln 2 ≈ 7
// core-seconds per core; a small query (under a core-second) stays well
// below that for a burst of several queries, yet a caller's burst counts
// against it for seconds, not minutes.
const HalfLife = 5 * time.Second

// maxIdleCallers bounds the callers remembered while idle (their decayed
// usage); beyond it the idle ones are forgotten.
const maxIdleCallers = 1024

type coreUser struct {
	name    string
	waiters []chan time.Time // FIFO; a grant sends the time it started
	held    int              // cores held now
	usage   float64          // core-seconds, decayed to at
	at      time.Time
	served  uint64 // seq of its last grant
}

// NewCores returns a scheduler of n cores (n < 1 takes 1).
func NewCores(n int) *Cores {
	n = max(n, 1)
	return &Cores{n: n, halfLife: HalfLife, now: time.Now, free: n, callers: map[string]*coreUser{}}
}

// Share is one caller's claim on the cores: what a run's workers take a
// core from, chunk by chunk. The zero Share (no Cores) grants at once.
type Share struct {
	c      *Cores
	caller string
}

// For returns caller's share.
func (c *Cores) For(caller string) Share { return Share{c: c, caller: caller} }

// Acquire waits for a core and returns the function that gives it back
// (call it exactly once, when the chunk is done). A chunk must not wait
// for another chunk while it holds a core.
func (s Share) Acquire(ctx context.Context) (release func(), err error) {
	if s.c == nil {
		return func() {}, nil
	}
	return s.c.acquire(ctx, s.caller)
}

func (c *Cores) acquire(ctx context.Context, caller string) (func(), error) {
	c.mu.Lock()
	u := c.user(caller)
	if c.free > 0 {
		c.free--
		c.grant(u)
		c.mu.Unlock()
		return c.releaser(caller, c.now()), nil
	}
	ch := make(chan time.Time, 1)
	u.waiters = append(u.waiters, ch)
	c.mu.Unlock()
	select {
	case at := <-ch:
		return c.releaser(caller, at), nil
	case <-ctx.Done():
		c.mu.Lock()
		select {
		case at := <-ch:
			// Granted as the context ended: give it back.
			c.mu.Unlock()
			c.releaser(caller, at)()
		default:
			for i, w := range u.waiters {
				if w == ch {
					u.waiters = append(u.waiters[:i], u.waiters[i+1:]...)
					break
				}
			}
			c.mu.Unlock()
		}
		return nil, ctx.Err()
	}
}

// user returns caller's record, making one (mu held).
func (c *Cores) user(caller string) *coreUser {
	u, ok := c.callers[caller]
	if !ok {
		if len(c.callers) >= maxIdleCallers {
			c.forgetIdle()
		}
		u = &coreUser{name: caller, at: c.now()}
		c.callers[caller] = u
	}
	return u
}

// forgetIdle drops the callers that hold and wait for nothing (mu held):
// a forgotten caller comes back with no usage, as after a long pause.
func (c *Cores) forgetIdle() {
	for name, u := range c.callers {
		if u.held == 0 && len(u.waiters) == 0 {
			delete(c.callers, name)
		}
	}
}

// grant records that u took a core (mu held).
func (c *Cores) grant(u *coreUser) {
	u.held++
	c.seq++
	u.served = c.seq
}

func (c *Cores) releaser(caller string, start time.Time) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			now := c.now()
			u := c.callers[caller]
			u.held--
			c.charge(u, now, now.Sub(start).Seconds())
			c.handOff(now)
		})
	}
}

// charge adds seconds to u's usage, decayed to now (mu held).
func (c *Cores) charge(u *coreUser, now time.Time, seconds float64) {
	u.usage = c.decayed(u, now) + max(seconds, 0)
	u.at = now
}

// decayed is u's usage as of now (mu held).
func (c *Cores) decayed(u *coreUser, now time.Time) float64 {
	dt := now.Sub(u.at)
	if dt <= 0 || u.usage == 0 {
		return u.usage
	}
	return u.usage * math.Exp2(-dt.Seconds()/c.halfLife.Seconds())
}

// handOff gives a freed core to the waiting caller that used the cores
// least lately (ties: served longest ago, then by name), or keeps it free (mu held).
func (c *Cores) handOff(now time.Time) {
	var next *coreUser
	var nextUsage float64
	for _, u := range c.callers {
		if len(u.waiters) == 0 {
			continue
		}
		use := c.decayed(u, now)
		if next == nil || use < nextUsage || (use == nextUsage && (u.served < next.served ||
			u.served == next.served && u.name < next.name)) {
			next, nextUsage = u, use
		}
	}
	if next == nil {
		c.free++
		return
	}
	ch := next.waiters[0]
	next.waiters = next.waiters[1:]
	c.grant(next)
	ch <- now
}

// CoreStats is the scheduler's state.
type CoreStats struct {
	Held, Waiting int
}

// Stats returns the scheduler's state now.
func (c *Cores) Stats() CoreStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st CoreStats
	for _, u := range c.callers {
		st.Held += u.held
		st.Waiting += len(u.waiters)
	}
	return st
}
