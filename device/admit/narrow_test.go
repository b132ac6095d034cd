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
// third of the time and run on 1.3 CPUs: Cores narrows to 1 grant (a
// chunk given back over the limit retires its core; a second chunk waits
// while one holds a core); after widenAfter calm windows it widens to 2 and the waiter
// gets a core without any release. A lone caller keeps both whatever
// the host.
func TestCoresNarrowToTheCPUTheProcessGets(t *testing.T) {
	c, clk := newTestCores(2)
	cpu := &fakeCPU{}
	c.sample = cpu.sample
	ctx := context.Background()
	small, big := c.For("small"), c.For("big")

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
	relA() // reads the window: narrowed to 1 with 2 held, this core retires
	if st := c.Stats(); st.Limit != 1 || st.Held != 1 || st.Waiting != 1 {
		t.Fatalf("after a short window: %+v, want limit 1, 1 held, small waiting", st)
	}
	relB() // now the one core goes to small
	relS := <-got
	if st := c.Stats(); st.Held != 1 || st.Waiting != 0 {
		t.Fatalf("the one core handed on: %+v, want 1 held", st)
	}
	gotB := chunkAsync(t, big)
	waitCores(t, c, 1) // 1 held of 1: the big chunk waits
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
