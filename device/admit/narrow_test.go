package admit

import (
	"context"
	"testing"
	"time"
)

// fakeCPU is the threads' CPU a test feeds Cores: each window adds run
// and wait as the test says.
type fakeCPU struct{ s cpuSample }

func (f *fakeCPU) sample() (cpuSample, bool) { return f.s, true }

// window steps the clock by one window in which the threads ran on cores
// CPUs on average and waited runnable wait of it (summed over threads).
func (f *fakeCPU) window(clk *fakeClock, cores float64, wait time.Duration) {
	f.s.run += time.Duration(cores * float64(narrowWindow))
	f.s.wait += wait
	clk.step(narrowWindow)
}

// chunkAsync asks for a core of r on a goroutine; the channel yields
// its release once granted.
func chunkAsync(t *testing.T, r *Run) <-chan func() {
	t.Helper()
	ch := make(chan func(), 1)
	go func() {
		rel, err := r.Acquire(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		ch <- rel
	}()
	return ch
}

// Two callers share 2 cores while the process's threads wait runnable a
// third of the time and run on 1.3 CPUs: Cores narrows to 1 grant. The
// small caller (less service than the big one's runs) still takes both
// cores; the big one's chunks wait while one is held, and a core the
// small one gives back over the limit retires rather than go to them.
// After widenAfter calm windows Cores widens to 2 and the big chunk gets
// a core without any release. A lone caller keeps both whatever the host.
func TestCoresNarrowToTheCPUTheProcessGets(t *testing.T) {
	c, clk := newTestCores(2)
	cpu := &fakeCPU{}
	c.sample = cpu.sample
	ctx := context.Background()
	small, small2, big := c.For("small"), c.For("small"), c.For("big")

	// A lone caller on a short host: both grants stay.
	relA, err := big.Acquire(ctx) // first reading
	if err != nil {
		t.Fatal(err)
	}
	cpu.window(clk, 1.3, 60*time.Millisecond)
	relB, err := big.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Limit != 2 || st.Held != 2 {
		t.Fatalf("a lone caller: %+v, want 2 held of 2", st)
	}

	// The small caller waits for a core: shared now; a short window.
	got := chunkAsync(t, small)
	waitCores(t, c, 1)
	cpu.window(clk, 1.3, 60*time.Millisecond)
	relA() // reads the window: narrowed to 1; small may exceed it
	relS := <-got
	if st := c.Stats(); st.Limit != 1 || st.Held != 2 || st.Waiting != 0 {
		t.Fatalf("after a short window: %+v, want limit 1, 2 held (small beyond it)", st)
	}
	relB() // over the limit, nobody waiting: retired
	if st := c.Stats(); st.Held != 1 {
		t.Fatalf("over the limit, a release: %+v, want 1 held", st)
	}
	gotB := chunkAsync(t, big)
	waitCores(t, c, 1)               // 1 held of 1: the big chunk waits
	rel2, err := small2.Acquire(ctx) // the small caller's: beyond the limit at once
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Held != 2 || st.Waiting != 1 {
		t.Fatalf("the small caller's second chunk: %+v, want 2 held, big waiting", st)
	}
	rel2() // over the limit: retired, not handed to big
	if st := c.Stats(); st.Held != 1 || st.Waiting != 1 {
		t.Fatalf("the small caller's chunk given back: %+v, want 1 held, big waiting", st)
	}
	for i := 0; i < widenAfter-1; i++ {
		cpu.window(clk, 1, 0)
		c.mu.Lock()
		c.narrow(c.now())
		c.mu.Unlock()
		if st := c.Stats(); st.Limit != 1 || st.Waiting != 1 {
			t.Fatalf("calm window %d: %+v, want still narrowed, big waiting", i+1, st)
		}
	}
	cpu.window(clk, 1, 0)
	c.mu.Lock()
	c.narrow(c.now())
	c.mu.Unlock()
	relB = <-gotB // widened: granted without a release
	if st := c.Stats(); st.Limit != 2 || st.Held != 2 || st.Waiting != 0 {
		t.Fatalf("after %d calm windows: %+v, want 2 held of 2", widenAfter, st)
	}
	relS()
	relB()
	if st := small.Stats(); st.Chunks != 1 || st.Limit != 1 {
		t.Fatalf("small's chunk: %+v, want 1 chunk granted under a limit of 1", st)
	}
	if st := big.Stats(); st.Chunks != 3 || st.Limit != 2 {
		t.Fatalf("big's chunks: %+v, want 3, each granted under 2", st)
	}

	// Only big is left: the next reading gives it all n, short host or not.
	c.mu.Lock()
	c.setLimit(1, c.now())
	c.mu.Unlock()
	cpu.window(clk, 1.3, 60*time.Millisecond)
	rel, err := big.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	if st := c.Stats(); st.Limit != 2 {
		t.Fatalf("a lone caller after narrowing: %+v, want limit 2", st)
	}
}

// Narrowed to 1 while the small caller holds cores, the big one keeps its
// floor: once it has watched starveAfter times its last chunk, the next
// core given back goes to it, beyond the limit.
func TestCoresNarrowedKeepsTheFloor(t *testing.T) {
	c, clk := newTestCores(2)
	ctx := context.Background()
	small, small2, big := c.For("small"), c.For("small"), c.For("big")
	rel, err := big.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.step(10 * time.Millisecond) // big's last chunk: 10 ms
	rel()
	relS, err := small.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.setLimit(1, c.now())
	c.mu.Unlock()
	gotB := chunkAsync(t, big)
	waitCores(t, c, 1)
	rel2, err := small2.Acquire(ctx) // beyond the limit: big has more service
	if err != nil {
		t.Fatal(err)
	}
	clk.step(20 * time.Millisecond)
	rel2() // small has held 20 ms while big waited: not yet 4 × 10 ms
	if st := c.Stats(); st.Held != 1 || st.Waiting != 1 {
		t.Fatalf("big not starving: %+v, want 1 held, big waiting", st)
	}
	if rel2, err = c.For("small").Acquire(ctx); err != nil { // a new small run: no service yet
		t.Fatal(err)
	}
	clk.step(20 * time.Millisecond) // 20 ms more from each of two small chunks: 80 ms passed big
	rel2()                          // starving: this core goes to big, beyond the limit
	relB := <-gotB
	if st := c.Stats(); st.Limit != 1 || st.Held != 2 || st.Waiting != 0 {
		t.Fatalf("big starving: %+v, want it served beyond the limit of 1", st)
	}
	relB()
	relS()
}

// A host that gives the process what it runs (little waiting) leaves the
// grants alone though callers share them.
func TestCoresNarrowNotOnACalmHost(t *testing.T) {
	c, clk := newTestCores(2)
	cpu := &fakeCPU{}
	c.sample = cpu.sample
	ctx := context.Background()
	a, b := c.For("a"), c.For("b")
	relA, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	relB, err := b.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		cpu.window(clk, 2, 10*time.Millisecond) // waited 1/21 of the time
		relA()
		if relA, err = a.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.Limit != 2 || st.Held != 2 {
		t.Fatalf("%+v, want 2 held of 2", st)
	}
	relA()
	relB()
}
