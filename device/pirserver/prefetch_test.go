package pirserver

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a prefetcher's fill that records the tiles it is asked for,
// each held until release is closed (nil: not held).
type recorder struct {
	mu      sync.Mutex
	filled  []int
	release chan struct{}
}

func (r *recorder) fill(k int) {
	r.mu.Lock()
	r.filled = append(r.filled, k)
	r.mu.Unlock()
	if r.release != nil {
		<-r.release
	}
}

func (r *recorder) got() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.filled)
}

// settle waits for p's goroutine to go idle.
func settle(t *testing.T, p *prefetcher) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		idle := !p.running
		p.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the prefetcher did not go idle")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPrefetcherWindow: a scan starting tile k has tiles up to k + ahead
// populated, each once a pass, in order, never past the last tile; a new
// pass (tile 0 again) populates them again; stop waits for the tile being
// populated and nothing is populated after it.
func TestPrefetcherWindow(t *testing.T) {
	r := &recorder{}
	p := &prefetcher{n: 10, ahead: 3, fill: r.fill}
	p.started(0)
	settle(t, p)
	if got := r.got(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("after tile 0: populated %v, want 0..3", got)
	}
	p.started(1) // the second worker's first tile: nothing new past 4
	settle(t, p)
	p.started(2)
	p.started(4)
	settle(t, p)
	if got := r.got(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("after tile 4: populated %v, want 0..7", got)
	}
	p.started(9)
	settle(t, p)
	if got := r.got(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("after the last tile: populated %v, want 0..9 once each", got)
	}
	// A second pass starts over.
	r.filled = nil
	p.started(0)
	settle(t, p)
	if got := r.got(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("a second pass: populated %v, want 0..3", got)
	}

	// stop waits for the tile in progress; none after it.
	r2 := &recorder{release: make(chan struct{})}
	p2 := &prefetcher{n: 10, ahead: 5, fill: r2.fill}
	p2.started(0)
	for len(r2.got()) == 0 {
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { p2.stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("stop returned while a tile was being populated")
	case <-time.After(20 * time.Millisecond):
	}
	close(r2.release)
	<-stopped
	p2.started(6)
	time.Sleep(10 * time.Millisecond)
	if got := r2.got(); !slices.Equal(got, []int{0}) {
		t.Fatalf("populated %v across a stop, want only tile 0", got)
	}
	// The zero and nil prefetchers do nothing.
	var zero prefetcher
	zero.started(0)
	zero.stop()
	var none *prefetcher
	none.started(3)
	none.stop()
}
