package cluster

import (
	"slices"
	"sync"
	"time"
)

// A device that failed breakerFailures shard calls in a row has its
// circuit opened: for breakerCooldown it is asked only after every other
// live replica of a shard (never skipped: with no other replica left it
// is still tried). After the cooldown it takes its place again
// (half-open); one success closes the circuit, one more failure opens it
// for another cooldown.
const (
	breakerFailures = 3
	breakerCooldown = 30 * time.Second
)

// breakers keeps each device's run of failures and open circuit, by
// address. The zero value is ready; now is time.Now unless a test sets
// it.
type breakers struct {
	mu     sync.Mutex
	now    func() time.Time
	byAddr map[string]*breaker
}

type breaker struct {
	fails     int       // consecutive failures
	openUntil time.Time // asked last until then
}

func (b *breakers) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return time.Now()
}

// failed records a failed call to addr; it reports whether the circuit
// opened with it.
func (b *breakers) failed(addr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byAddr == nil {
		b.byAddr = map[string]*breaker{}
	}
	s := b.byAddr[addr]
	if s == nil {
		s = &breaker{}
		b.byAddr[addr] = s
	}
	s.fails++
	now := b.clock()
	if s.fails >= breakerFailures && !now.Before(s.openUntil) {
		s.openUntil = now.Add(breakerCooldown)
		return true
	}
	return false
}

// succeeded closes addr's circuit.
func (b *breakers) succeeded(addr string) {
	b.mu.Lock()
	delete(b.byAddr, addr)
	b.mu.Unlock()
}

// isOpen reports whether addr is to be asked last.
func (b *breakers) isOpen(addr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.byAddr[addr]
	return s != nil && b.clock().Before(s.openUntil)
}

// order moves the replicas whose device's circuit is open behind the
// others, keeping the map's order within each group.
func (b *breakers) order(ids []string, addrOf func(id string) string) {
	open := map[string]bool{}
	for _, id := range ids {
		open[id] = b.isOpen(addrOf(id))
	}
	slices.SortStableFunc(ids, func(x, y string) int {
		switch {
		case open[x] == open[y]:
			return 0
		case open[y]:
			return -1
		}
		return 1
	})
}
