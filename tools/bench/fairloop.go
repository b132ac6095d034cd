package bench

import (
	"context"
	"math/rand/v2"
	"sync"
)

// heavyLoop is the heavy identity's query loop, paused and resumed
// between its queries.
type heavyLoop struct {
	mu       sync.Mutex
	cond     *sync.Cond
	paused   bool
	inFlight bool
	stopped  bool
	failed   error
	n        int // queries answered since resetCounts
	sum      float64
	use      stageSums
	done     chan struct{}
}

// newHeavyLoop starts the loop, paused.
func newHeavyLoop(ctx context.Context, heavy fairSide, seed uint64, logf func(string, ...any)) *heavyLoop {
	l := &heavyLoop{paused: true, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	go func() {
		defer close(l.done)
		rng := rand.New(rand.NewPCG(seed, 0x4ea))
		for {
			l.mu.Lock()
			for l.paused && !l.stopped {
				l.cond.Wait()
			}
			if l.stopped {
				l.mu.Unlock()
				return
			}
			l.inFlight = true
			l.mu.Unlock()
			q, err := heavy.get(ctx, rng.IntN(heavy.records))
			l.mu.Lock()
			l.inFlight = false
			if err != nil {
				l.failed = err
				l.stopped = true
			} else {
				l.n++
				l.sum += q.Seconds
				l.use.add(q.Device.Cores)
				logf("large query in %.3f s (device %.3f s) %s", q.Seconds, q.Device.Seconds, stageLine(q.Device))
			}
			l.cond.Broadcast()
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *heavyLoop) resume() {
	l.mu.Lock()
	l.paused = false
	l.cond.Broadcast()
	l.mu.Unlock()
}

// pause waits for the query in flight, if any, and holds the loop.
func (l *heavyLoop) pause() {
	l.mu.Lock()
	l.paused = true
	for l.inFlight {
		l.cond.Wait()
	}
	l.mu.Unlock()
}

func (l *heavyLoop) answers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func (l *heavyLoop) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// summary is the answered queries' count, mean time and stages.
func (l *heavyLoop) summary() (int, float64, []StageUse) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return 0, 0, nil
	}
	return l.n, l.sum / float64(l.n), l.use.mean()
}

// stop ends the loop after the query in flight.
func (l *heavyLoop) stop() {
	l.mu.Lock()
	l.stopped = true
	l.cond.Broadcast()
	l.mu.Unlock()
	<-l.done
}
