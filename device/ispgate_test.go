package device

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// stepClock is a clock the test moves by hand.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) step(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// gateWith is a gate on a clock the test steps.
func gateWith(bound time.Duration) (*ispGate, *stepClock) {
	clk := &stepClock{t: time.Unix(0, 0)}
	g := newISPGate(bound)
	g.now = clk.now
	return g, clk
}

// until waits for a state of the gate that another goroutine reaches
// (no assertion on how long it takes).
func until(t *testing.T, g *ispGate, what string, f func(*ispGate) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		ok := f(g)
		g.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gate never reached: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// events records the order things happened in.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) { e.mu.Lock(); e.log = append(e.log, s); e.mu.Unlock() }
func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// A write waiting for ISP mode to end does not hold back new runs within
// its bound (with a sync.RWMutex, one pending Put froze every query
// behind the running one); it goes once no run is left, and runs wait for
// it while it writes.
func TestPendingWriteDoesNotFreezeRuns(t *testing.T) {
	g, clk := gateWith(50 * time.Millisecond)
	var ev events
	g.enter()
	wrote := make(chan struct{})
	go func() {
		g.lock()
		ev.add("write")
		g.unlock()
		close(wrote)
	}()
	until(t, g, "the write waits", func(g *ispGate) bool { return len(g.queue) == 1 })
	clk.step(50 * time.Millisecond) // at the bound, not past it
	g.enter()                       // a new run goes first
	ev.add("run")
	g.leave()
	g.leave()
	<-wrote
	if got, want := ev.get(), []string{"run", "write"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// Once a write has waited past its bound, new runs wait behind it: the
// runs already going finish, the write goes, then the held runs.
func TestOverdueWriteGoesBeforeLaterRuns(t *testing.T) {
	g, clk := gateWith(50 * time.Millisecond)
	var ev events
	g.enter() // run A, in flight when the write arrives
	wrote := make(chan struct{})
	go func() {
		g.lock()
		g.mu.Lock()
		ev.add("write (running " + strconv.Itoa(g.running) + ")")
		g.mu.Unlock()
		g.unlock()
		close(wrote)
	}()
	until(t, g, "the write waits", func(g *ispGate) bool { return len(g.queue) == 1 })
	clk.step(10 * time.Millisecond)
	g.enter() // run B: the write is within its bound, B goes
	ev.add("B in")
	clk.step(41 * time.Millisecond) // the write has now waited 51 ms
	cIn := make(chan struct{})
	go func() {
		g.enter() // run C arrives after the bound: it waits for the write
		ev.add("C in")
		close(cIn)
	}()
	until(t, g, "run C is held", func(g *ispGate) bool { return g.heldRuns == 1 })
	ev.add("A out")
	g.leave()
	ev.add("B out")
	g.leave()
	<-wrote
	<-cIn
	want := []string{"B in", "A out", "B out", "write (running 0)", "C in"}
	if got := ev.get(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	g.leave()
}

// Waiting writes go in arrival order, and each one's bound counts from
// its own arrival.
func TestWritesGoInTurn(t *testing.T) {
	g, clk := gateWith(50 * time.Millisecond)
	var ev events
	g.enter()
	done := make(chan struct{}, 2)
	write := func(name string) {
		g.lock()
		ev.add(name)
		g.unlock()
		done <- struct{}{}
	}
	go write("first")
	until(t, g, "the first write waits", func(g *ispGate) bool { return len(g.queue) == 1 })
	clk.step(30 * time.Millisecond)
	go write("second")
	until(t, g, "the second write waits", func(g *ispGate) bool { return len(g.queue) == 2 })
	clk.step(30 * time.Millisecond) // the first is overdue, the second not
	g.leave()
	<-done
	<-done
	if got, want := ev.get(), []string{"first", "second"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.overdue() || len(g.queue) != 0 {
		t.Fatalf("after both writes: queue %v", g.queue)
	}
}

// Writes go together: a small write arriving while a large one is in
// progress (a compaction's tile beside an update's delta segment) goes at
// once and ends first; it does not queue behind it.
func TestWritesGoTogether(t *testing.T) {
	g, _ := gateWith(50 * time.Millisecond)
	var ev events
	g.lock() // the large write, in progress
	small := make(chan struct{})
	go func() {
		g.lock()
		ev.add("small write")
		g.unlock()
		close(small)
	}()
	select {
	case <-small:
	case <-time.After(10 * time.Second):
		t.Fatal("the small write waited for the large one to end")
	}
	ev.add("large write ends")
	g.unlock()
	// The runs go once no write is left.
	g.enter()
	ev.add("run")
	g.leave()
	if got, want := ev.get(), []string{"small write", "large write ends", "run"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// A run waiting for the writes in progress is not passed by new writes
// joining them: a write arriving after it waits until the writes in
// progress end.
func TestHeldRunStopsNewWrites(t *testing.T) {
	g, _ := gateWith(50 * time.Millisecond)
	var ev events
	g.lock() // write A, in progress
	ran := make(chan struct{})
	go func() {
		g.enter()
		ev.add("run")
		g.leave()
		close(ran)
	}()
	until(t, g, "the run is held", func(g *ispGate) bool { return g.heldRuns == 1 })
	wrote := make(chan struct{})
	go func() {
		g.lock()
		ev.add("write B")
		g.unlock()
		close(wrote)
	}()
	until(t, g, "write B waits", func(g *ispGate) bool { return len(g.queue) == 1 })
	ev.add("A ends")
	g.unlock()
	<-ran
	<-wrote
	got := ev.get()
	if len(got) != 3 || got[0] != "A ends" {
		t.Fatalf("order %v: write B or the run went while A wrote with a run held", got)
	}
}
