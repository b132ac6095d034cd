package admit

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Cores shares a device's cores between runs chunk by chunk. Queue admits
// whole runs; once two runs go at once, each would start all its workers
// and the Go scheduler would split the cores by goroutine, so a caller
// looping large scans takes half or more of them from another's small
// query, which then takes twice its time alone or more. Instead every
// worker of every run takes a core from Cores for each chunk of work (a
// tile block, a body of a stream program, an object read) and gives it
// back after, so at most n chunks run at once, and Cores decides whose
// chunk runs next.
//
// A freed core goes to the waiting run that has had the least service so
// far (the core time its chunks held; ties to the caller served longest
// ago): a short query beside a long scan is served first and finishes in
// about its time alone, the long scan losing only that. So that no caller
// starves behind a stream of short runs, a waiting run whose caller has
// watched others hold cores for starveAfter times its own last chunk
// since it was last served goes next: a waiting caller keeps at least
// 1/(starveAfter+1) of the core time, whatever the chunk sizes. Two runs
// that start together and keep competing alternate (their service stays
// equal).
//
// Grants are worth something only while the machine runs the chunks that
// hold them. On a host whose other processes take CPU, n grants may get
// fewer than n cores: the operating system then splits what the device
// gets evenly between the chunks holding one, the small query's and the
// long scan's alike, and the small query takes twice its time alone or
// more whatever order Cores grants in. So while callers share the cores
// Cores measures, window by window, what its process's threads ran and
// how long they waited runnable for a CPU (narrow.go); when they waited
// a quarter of the time or more, it grants only as many cores as the
// process got, and widens again one at a time after calm windows —
// except to the run with less service than every other caller's that
// holds or waits (the small query), and to a starving caller, which may
// still take all n: narrowing holds back the long scan, not the query
// it should yield to (the host's scheduler shares a process's CPU by
// thread, so the small query would lose what its own parallel chunks
// win it). A lone caller has all n again at the next reading.
type Cores struct {
	n   int
	now func() time.Time // the clock (tests freeze or step it)

	mu      sync.Mutex
	free    int                    // grants left under limit; > 0 only while nobody waits, < 0 while over a narrowed limit
	limit   int                    // grants allowed now: n, or fewer while narrowed
	waiting []*Run                 // runs with a chunk waiting, in the order they began to wait
	callers map[string]*coreCaller // callers with a run waiting
	seq     uint64                 // grants so far: when callers were last served
	holding map[string]int         // cores held, by caller
	holders map[*Run]int           // cores held, by run
	// Anticipation: a run that releases a core usually asks again a
	// moment later (its worker prepares the next chunk's operands outside
	// any chunk). If the core went at once to a waiting run with more
	// service, the released run would wait a whole chunk of the other's
	// for every chunk of its own: a small query beside a long scan took
	// 4× its time alone, not 2×. So a core freed by a run with less service
	// than the next waiter is kept for that run for up to anticipate; it
	// goes to the waiter if the run does not come back (Iyer and Druschel's
	// anticipatory scheduling, SOSP 2001, for disks).
	kept     *Run   // the run a freed core is kept for, or nil
	keptStop func() // stops the timer that hands the kept core on
	wait     time.Duration
	// after runs f after d and returns what stops it (time.AfterFunc;
	// tests fire it by hand).
	after func(d time.Duration, f func()) (stop func())
	// sample reads the process's threads' CPU (threadCPU; tests feed
	// it); the last reading and when; calm windows since the last change.
	sample    func() (cpuSample, bool)
	sampledAt time.Time
	last      cpuSample
	calm      int
}

// anticipate is how long a freed core waits for the run that released it.
const anticipate = 3 * time.Millisecond

// starveAfter is how many of its own chunks' time a waiting caller may
// watch others hold cores before it is served: it keeps ≥ 1/5 of them.
const starveAfter = 4

type coreCaller struct {
	runs   int           // its runs in Cores.waiting
	passed time.Duration // core time others held since it began waiting or was last served
	served uint64        // seq of its last grant
}

// Run is one run's claim on the cores: its workers take a core from it
// chunk by chunk. A Run of no Cores grants at once.
type Run struct {
	c      *Cores
	caller string
	// Under c.mu:
	waiters   []chan time.Time // FIFO; a grant sends the time it started
	attained  time.Duration    // core time its chunks have held
	lastChunk time.Duration    // how long its last chunk held a core
	use       RunStats
}

// RunStats is how a run used the cores: what its chunks waited for one
// and held, summed over its workers (a device reports them per run, so
// that where a query's time went under sharing can be measured).
type RunStats struct {
	Chunks         int           // chunks granted and given back
	Waited, Held   time.Duration // from asking to the grant; from the grant to the release
	MaxWait, Chunk time.Duration // the longest wait; the longest chunk
	Limit          int           // the fewest cores Cores granted at any of its grants (narrow.go)
}

// grantedUnder records that a chunk of r was granted a core while Cores
// granted limit (mu held).
func (r *Run) grantedUnder(limit int) {
	if r.use.Limit == 0 || limit < r.use.Limit {
		r.use.Limit = limit
	}
}

// Stats returns r's use of the cores so far (zero for a Run of no Cores).
func (r *Run) Stats() RunStats {
	if r.c == nil {
		return RunStats{}
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	return r.use
}

// NewCores returns a scheduler of n cores (n < 1 takes 1).
func NewCores(n int) *Cores {
	n = max(n, 1)
	return &Cores{n: n, now: time.Now, free: n, limit: n, sample: threadCPU, callers: map[string]*coreCaller{}, holding: map[string]int{}, holders: map[*Run]int{}, wait: anticipate,
		after: func(d time.Duration, f func()) func() { t := time.AfterFunc(d, f); return func() { t.Stop() } }}
}

// For starts a run of caller's. A nil Cores returns a Run that grants at
// once.
func (c *Cores) For(caller string) *Run { return &Run{c: c, caller: caller} }

// Acquire waits for a core and returns the function that gives it back
// (call it exactly once, when the chunk is done). A chunk must not wait
// for another chunk while it holds a core.
func (r *Run) Acquire(ctx context.Context) (release func(), err error) {
	c := r.c
	if c == nil {
		return func() {}, nil
	}
	c.mu.Lock()
	asked := c.now()
	c.narrow(asked)
	if c.kept == r { // the core kept for this run since its last chunk
		c.kept = nil
		c.keptStop()
		c.seq++
		c.hold(r)
		c.mu.Unlock()
		return c.releaser(r, asked, asked), nil
	}
	if c.free > 0 || (c.free <= 0 && c.limit < c.n && c.mayExceed(r, c.limit-c.free)) {
		c.free--
		c.seq++
		c.hold(r)
		c.mu.Unlock()
		return c.releaser(r, asked, asked), nil
	}
	ch := make(chan time.Time, 1)
	if len(r.waiters) == 0 {
		c.waiting = append(c.waiting, r)
		cc := c.callers[r.caller]
		if cc == nil {
			cc = &coreCaller{}
			c.callers[r.caller] = cc
		}
		cc.runs++
	}
	r.waiters = append(r.waiters, ch)
	c.mu.Unlock()
	select {
	case at := <-ch:
		return c.releaser(r, asked, at), nil
	case <-ctx.Done():
		c.mu.Lock()
		select {
		case at := <-ch:
			// Granted as the context ended: give it back.
			c.mu.Unlock()
			c.releaser(r, asked, at)()
		default:
			r.waiters = slices.DeleteFunc(r.waiters, func(w chan time.Time) bool { return w == ch })
			if len(r.waiters) == 0 {
				c.stopWaiting(r)
			}
			c.mu.Unlock()
		}
		return nil, ctx.Err()
	}
}

// Shared reports whether a run of another caller holds or waits for a
// core now. A chunk should then take one core's worth of work, not fan
// out on goroutines of its own (a store read channel by channel, not all
// channels at once), or its run would take more than its grants.
func (r *Run) Shared() bool {
	c := r.c
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sharedWith(r.caller)
}

// sharedWith reports whether a caller other than caller holds or waits
// for a core (mu held).
func (c *Cores) sharedWith(caller string) bool {
	if len(c.holding) > 1 || (len(c.holding) == 1 && c.holding[caller] == 0) {
		return true
	}
	for name := range c.callers {
		if name != caller {
			return true
		}
	}
	return false
}

// stopWaiting takes r, whose last waiter left, off the waiting list (mu
// held).
func (c *Cores) stopWaiting(r *Run) {
	c.waiting = slices.DeleteFunc(c.waiting, func(x *Run) bool { return x == r })
	if cc := c.callers[r.caller]; cc != nil {
		if cc.runs--; cc.runs == 0 {
			delete(c.callers, r.caller)
		}
	}
}

// releaser is the release of a chunk of r that asked for a core at asked
// and got it at start.
func (c *Cores) releaser(r *Run, asked, start time.Time) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			now := c.now()
			held, waited := max(now.Sub(start), 0), max(start.Sub(asked), 0)
			r.attained += held
			r.lastChunk = held
			r.use.Chunks++
			r.use.Held += held
			r.use.Waited += waited
			r.use.Chunk = max(r.use.Chunk, held)
			r.use.MaxWait = max(r.use.MaxWait, waited)
			c.narrow(now)
			if c.holding[r.caller]--; c.holding[r.caller] == 0 {
				delete(c.holding, r.caller)
			}
			if c.holders[r]--; c.holders[r] == 0 {
				delete(c.holders, r)
			}
			for name, cc := range c.callers {
				if name != r.caller {
					cc.passed += held
				}
			}
			if w := c.next(); w != nil && c.kept == nil && c.free >= 0 && c.wait > 0 && len(r.waiters) == 0 &&
				w.attained > r.attained && !c.starving(w) {
				c.kept = r
				c.keptStop = c.after(c.wait, func() {
					c.mu.Lock()
					defer c.mu.Unlock()
					if c.kept == r {
						c.kept = nil
						c.handOff(c.now())
					}
				})
				return
			}
			c.handOff(now)
		})
	}
}

// hold counts a core granted to r (mu held).
func (c *Cores) hold(r *Run) {
	c.holding[r.caller]++
	c.holders[r]++
	r.grantedUnder(c.limit)
}

// mayExceed reports whether r may take a core beyond a narrowed limit,
// held cores being held: while fewer than n are, a starving run may, and
// so may one with less service than every run of another caller holding
// or waiting for a core (mu held).
func (c *Cores) mayExceed(r *Run, held int) bool {
	if held >= c.n {
		return false
	}
	if c.starving(r) {
		return true
	}
	for h := range c.holders {
		if h.caller != r.caller && h.attained <= r.attained {
			return false
		}
	}
	for _, w := range c.waiting {
		if w.caller != r.caller && w.attained <= r.attained {
			return false
		}
	}
	return true
}

// starving reports whether r's caller has watched others hold cores
// starveAfter times its last chunk (mu held).
func (c *Cores) starving(r *Run) bool {
	cc := c.callers[r.caller]
	return cc != nil && r.lastChunk > 0 && cc.passed >= starveAfter*r.lastChunk
}

// handOff gives a freed core to the next waiting run, or keeps it free,
// or, over a narrowed limit, retires it unless that run may exceed the
// limit (mu held).
func (c *Cores) handOff(now time.Time) {
	r := c.next()
	if r == nil || (c.free < 0 && !c.mayExceed(r, c.limit-c.free-1)) {
		c.free++
		return
	}
	ch := r.waiters[0]
	r.waiters = r.waiters[1:]
	cc := c.callers[r.caller]
	c.seq++
	cc.served, cc.passed = c.seq, 0
	c.hold(r)
	if len(r.waiters) == 0 {
		c.stopWaiting(r)
	}
	ch <- now
}

// next is the waiting run to serve: the first to wait of the starving
// runs (whose caller has watched others hold cores starveAfter times its
// last chunk), if any; else the run with the least service, ties to the
// caller served longest ago, then to the run waiting longest (mu held).
func (c *Cores) next() *Run {
	var best *Run
	for _, r := range c.waiting {
		cc := c.callers[r.caller]
		if c.starving(r) {
			return r
		}
		if best == nil || r.attained < best.attained ||
			(r.attained == best.attained && cc.served < c.callers[best.caller].served) {
			best = r
		}
	}
	return best
}

// CoreStats is the scheduler's state.
type CoreStats struct {
	Held, Waiting int // cores held; chunks waiting for one
	Limit         int // cores it grants now (narrow.go)
}

// Stats returns the scheduler's state now.
func (c *Cores) Stats() CoreStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CoreStats{Held: c.limit - c.free, Limit: c.limit}
	if c.kept != nil { // kept for a run that has not taken it yet
		st.Held--
	}
	for _, r := range c.waiting {
		st.Waiting += len(r.waiters)
	}
	return st
}
