package admit

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock the test steps by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) step(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func newTestCores(n int) (*Cores, *fakeClock) {
	c := NewCores(n)
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	c.now = clk.now
	c.wait = 0     // no anticipation (real time) but where a test fires it by hand
	c.sample = nil // no narrowing (the host's CPU) but where a test feeds it
	return c, clk
}

// waitCores polls until the scheduler has n waiters.
func waitCores(t *testing.T, c *Cores, n int) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if c.Stats().Waiting == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d waiters, want %d", c.Stats().Waiting, n)
}

// grantOrder queues one chunk of the run of each caller of callers (one
// run per caller; in that order, one waiter at a time) behind the held
// core, gives the core back and returns the order in which the waiters
// got it.
func grantOrder(t *testing.T, c *Cores, release func(), runs map[string]*Run, callers []string) []string {
	t.Helper()
	return grantOrderHolding(t, c, release, runs, callers, func(string) {})
}

// grantOrderHolding is grantOrder with hold called while each chunk holds
// its core (a test steps the clock there).
func grantOrderHolding(t *testing.T, c *Cores, release func(), runs map[string]*Run, callers []string, hold func(caller string)) []string {
	t.Helper()
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	for i, name := range callers {
		r := runs[name]
		if r == nil {
			r = c.For(name)
			runs[name] = r
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, err := r.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			hold(name)
			rel()
		}()
		waitCores(t, c, i+1)
	}
	release()
	wg.Wait()
	return order
}

// Two runs of two callers with equal service, each with three chunks
// waiting behind a core: the grants alternate.
func TestCoresAlternateBetweenCallers(t *testing.T) {
	c, _ := newTestCores(1)
	rel, err := c.For("x").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := grantOrder(t, c, rel, map[string]*Run{}, []string{"a", "a", "a", "b", "b", "b"})
	// The clock stands still: no service, neither caller served yet, so
	// the first to wait goes first, then they take turns.
	if want := []string{"a", "b", "a", "b", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("grants %v, want %v", got, want)
	}
	if st := c.Stats(); st.Held != 0 || st.Waiting != 0 {
		t.Fatalf("after all released: %+v", st)
	}
}

// A run that has held the core for seconds (a large scan) yields to a new
// one (a small query), whose chunks go first — until the long run's
// caller has watched starveAfter times its own chunk (2 s) go to the
// other: then it is served once, and so on.
func TestCoresLeastServiceFirstWithoutStarving(t *testing.T) {
	c, clk := newTestCores(1)
	big := c.For("big")
	for range 5 {
		rel, err := big.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		clk.step(2 * time.Second) // each chunk holds the core 2 s
		rel()
	}
	rel, err := big.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clk.step(2 * time.Second)
	runs := map[string]*Run{"big": big}
	callers := []string{"big", "big", "big"}
	for range 2*starveAfter + 4 {
		callers = append(callers, "small")
	}
	got := grantOrderHolding(t, c, rel, runs, callers, func(name string) {
		if name == "big" {
			clk.step(2 * time.Second)
		} else {
			clk.step(time.Second)
		}
	})
	// 2·starveAfter small chunks of 1 s pass big by starveAfter × its 2 s
	// chunk; then big once; then the remaining 4 small ones (4 s, less than
	// that), then big's.
	var want []string
	for range 2 * starveAfter {
		want = append(want, "small")
	}
	want = append(want, "big", "small", "small", "small", "small", "big", "big")
	if !slices.Equal(got, want) {
		t.Fatalf("grants %v, want %v", got, want)
	}
	if want := 18 * time.Second; big.attained != want {
		t.Fatalf("the long run's service: %v, want %v", big.attained, want)
	}
}

// n cores: never more than n chunks hold one, whatever the callers.
func TestCoresBoundHolders(t *testing.T) {
	c := NewCores(2)
	var holding, peak atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := c.For([]string{"a", "b", "c"}[i%3])
			for range 50 {
				rel, err := s.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				h := holding.Add(1)
				for {
					p := peak.Load()
					if h <= p || peak.CompareAndSwap(p, h) {
						break
					}
				}
				time.Sleep(10 * time.Microsecond)
				holding.Add(-1)
				rel()
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Fatalf("%d chunks held cores at once, want 2", p)
	}
	if st := c.Stats(); st.Held != 0 || st.Waiting != 0 {
		t.Fatalf("after all released: %+v", st)
	}
}

// A waiter whose context ends leaves the queue; the core goes to the
// next waiter, and a release called twice frees one core.
func TestCoresCancelledWaiterLeaves(t *testing.T) {
	c, _ := newTestCores(1)
	rel, err := c.For("a").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.For("b").Acquire(ctx)
		errc <- err
	}()
	waitCores(t, c, 1)
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if st := c.Stats(); st.Waiting != 0 || st.Held != 1 {
		t.Fatalf("after cancel: %+v", st)
	}
	rel()
	rel()
	if st := c.Stats(); st.Held != 0 {
		t.Fatalf("after release: %+v", st)
	}
	// Exactly one core is free: one Acquire succeeds at once, a second waits.
	r1, err := c.For("c").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if _, err := c.For("d").Acquire(short); err != context.DeadlineExceeded {
		t.Fatalf("second Acquire on one core: %v", err)
	}
	r1()
}

// A run of no Cores grants at once (runs outside a device).
func TestNoCores(t *testing.T) {
	var c *Cores
	rel, err := c.For("x").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rel()
}

// Shared: whether another caller's run holds or waits for a core.
func TestCoresShared(t *testing.T) {
	c, _ := newTestCores(1)
	a, b := c.For("a"), c.For("b")
	if a.Shared() {
		t.Fatal("an idle scheduler is shared")
	}
	rel, err := a.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a.Shared() || !b.Shared() || c.For("a").Shared() {
		t.Fatalf("a holding: a %v, b %v", a.Shared(), b.Shared())
	}
	done := make(chan struct{})
	go func() {
		r, err := b.Acquire(context.Background())
		if err == nil {
			r()
		}
		close(done)
	}()
	waitCores(t, c, 1)
	if !a.Shared() {
		t.Fatal("b waits, yet a's run is not shared")
	}
	rel()
	<-done
	if a.Shared() || b.Shared() {
		t.Fatal("idle again, yet shared")
	}
	var none *Cores
	if none.For("x").Shared() {
		t.Fatal("a run of no Cores is shared")
	}
}

// TestCoresKeepAFreedCoreForItsRun: a core freed by a run with less service
// than the waiter is kept for that run: the run asking again gets it while
// the waiter keeps waiting; a run that does not come back loses it to the
// waiter when the anticipation timer fires. A run with more service than
// the waiter keeps nothing. (The timer is fired by hand: no wall clock.)
func TestCoresKeepAFreedCoreForItsRun(t *testing.T) {
	c, clk := newTestCores(1)
	var fire []func()
	c.wait = time.Millisecond
	c.after = func(_ time.Duration, f func()) func() {
		fire = append(fire, f)
		return func() {}
	}
	ctx := context.Background()
	long, short := c.For("long"), c.For("short")
	rel, err := long.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.step(50 * time.Millisecond) // the long run has had 50 ms of service
	rel()
	rel, err = short.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var longGot atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := long.Acquire(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		longGot.Add(1)
		r()
	}()
	waitCores(t, c, 1)
	clk.step(time.Millisecond)
	rel() // kept for the short run: 1 ms of service against 50
	if len(fire) != 1 {
		t.Fatalf("%d anticipation timers set, want 1", len(fire))
	}
	if st := c.Stats(); st.Held != 0 || st.Waiting != 1 {
		t.Fatalf("with the core kept: %+v, want nothing held and the long run waiting", st)
	}
	rel, err = short.Acquire(ctx) // returns at once: the core is kept for it
	if err != nil {
		t.Fatal(err)
	}
	fire[0]() // the first wait ends after the short run took its core: nothing moves
	if st := c.Stats(); st.Held != 1 || st.Waiting != 1 || longGot.Load() != 0 {
		t.Fatalf("after the stale timer: %+v, long run served %d times", st, longGot.Load())
	}
	clk.step(time.Millisecond)
	rel() // kept again; the short run does not come back
	if len(fire) != 2 {
		t.Fatalf("%d anticipation timers set, want 2", len(fire))
	}
	fire[1]()
	<-done
	if longGot.Load() != 1 {
		t.Fatal("the waiter did not get the core the short run left")
	}
	// The long run (more service) releasing while the short one waits
	// keeps nothing: the short run is served at once.
	rel, err = long.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		r, err := short.Acquire(ctx)
		if err == nil {
			r()
		}
		close(got)
	}()
	waitCores(t, c, 1)
	rel()
	<-got
	if len(fire) != 2 {
		t.Fatalf("a core was kept for the run with more service (%d timers)", len(fire))
	}
}

// A run's stats count its chunks, the time each waited for the core and
// held it (stepped clock): a chunk granted at once waited nothing.
func TestCoresRunStats(t *testing.T) {
	c, clk := newTestCores(1)
	ctx := context.Background()
	a, b := c.For("a"), c.For("b")
	if st := (&Run{}).Stats(); st != (RunStats{}) {
		t.Fatalf("a run of no cores: %+v", st)
	}
	rel, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	granted := make(chan func())
	go func() {
		r, err := b.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		granted <- r
	}()
	waitCores(t, c, 1)
	clk.step(3 * time.Millisecond) // a holds 3 ms while b waits
	rel()
	relB := <-granted
	clk.step(5 * time.Millisecond) // b holds 5 ms
	relB()
	rel, err = a.Acquire(ctx) // free: no wait
	if err != nil {
		t.Fatal(err)
	}
	clk.step(time.Millisecond)
	rel()
	if got, want := a.Stats(), (RunStats{Chunks: 2, Held: 4 * time.Millisecond, Chunk: 3 * time.Millisecond, Limit: 1}); got != want {
		t.Fatalf("a: %+v, want %+v", got, want)
	}
	want := RunStats{Chunks: 1, Waited: 3 * time.Millisecond, Held: 5 * time.Millisecond, MaxWait: 3 * time.Millisecond, Chunk: 5 * time.Millisecond, Limit: 1}
	if got := b.Stats(); got != want {
		t.Fatalf("b: %+v, want %+v", got, want)
	}
}
