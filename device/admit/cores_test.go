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

// grantOrder queues each caller of callers (in that order, one waiter at a
// time) behind the held core, gives the core back and returns the order
// in which the waiters got it.
func grantOrder(t *testing.T, c *Cores, release func(), callers []string) []string {
	t.Helper()
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	for i, name := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, err := c.For(name).Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			rel()
		}()
		waitCores(t, c, i+1)
	}
	release()
	wg.Wait()
	return order
}

// Two callers with equal usage, each with three chunks waiting behind a
// core: the grants alternate, however the waiters queued.
func TestCoresAlternateBetweenCallers(t *testing.T) {
	c, _ := newTestCores(1)
	rel, err := c.For("a").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := grantOrder(t, c, rel, []string{"a", "a", "a", "b", "b", "b"})
	// The clock stands still: no usage, so the caller served longest ago
	// (b, never) goes first, then they take turns.
	if want := []string{"b", "a", "b", "a", "b", "a"}; !slices.Equal(got, want) {
		t.Fatalf("grants %v, want %v", got, want)
	}
	if st := c.Stats(); st.Held != 0 || st.Waiting != 0 {
		t.Fatalf("after all released: %+v", st)
	}
}

// A caller that held the cores for seconds (looping a large scan) yields
// to one that used none: the newcomer's chunks all go first while its
// usage is below the other's, then the looping caller's.
func TestCoresLeastRecentUsageFirst(t *testing.T) {
	c, clk := newTestCores(1)
	for range 5 {
		rel, err := c.For("big").Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		clk.step(2 * time.Second) // each chunk holds the core 2 s
		rel()
	}
	rel, err := c.For("big").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := grantOrder(t, c, rel, []string{"big", "big", "small", "small", "small"})
	if want := []string{"small", "small", "small", "big", "big"}; !slices.Equal(got, want) {
		t.Fatalf("grants %v, want %v", got, want)
	}
}

// Usage decays: after many half-lives a caller's old use no longer
// outweighs another's recent use.
func TestCoresUsageDecays(t *testing.T) {
	c, clk := newTestCores(1)
	use := func(name string, d time.Duration) {
		rel, err := c.For(name).Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		clk.step(d)
		rel()
	}
	use("old", 10*time.Second)
	clk.step(20 * HalfLife) // 10 s × 2^-20 ≈ 10 µs left
	use("recent", 100*time.Millisecond)
	rel, err := c.For("x").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := grantOrder(t, c, rel, []string{"recent", "old"})
	if want := []string{"old", "recent"}; !slices.Equal(got, want) {
		t.Fatalf("grants %v, want %v", got, want)
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

// The zero Share grants at once (runs outside a device).
func TestZeroShare(t *testing.T) {
	rel, err := Share{}.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rel()
}
