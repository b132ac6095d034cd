package device

import (
	"fmt"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api"
)

// IntakeLimits bound the memory requests take while they are decoded and
// served: Bytes of requests (weighed intakeFactor times their wire size)
// in flight at once, over all callers and connections. A request that
// does not fit waits up to Wait for others to end, then fails with
// api.ErrBusy (ResourceExhausted, reason BUSY). Requests of at most Small
// bytes (names and numbers; a query's small inputs) are not weighed: they
// are bounded by their type's size limit and the server's streams, and an
// attacker's bulk requests must not crowd them out. Bytes ≤ 0: no budget.
type IntakeLimits struct {
	Bytes int64
	Wait  time.Duration
	Small int64
}

// DefaultIntake: 256 MiB in flight (one request of the largest size, or
// many smaller), a second's wait, requests up to 256 KiB free.
var DefaultIntake = IntakeLimits{Bytes: 256 << 20, Wait: time.Second, Small: 256 << 10}

// intake is the budget of request bytes in flight.
type intake struct {
	lim  IntakeLimits
	mu   sync.Mutex
	used int64
	// freed is closed (and replaced) whenever bytes are released: waiters
	// look again.
	freed chan struct{}
}

func newIntake(lim IntakeLimits) *intake { return &intake{lim: lim, freed: make(chan struct{})} }

// acquire takes n bytes of the budget, waiting up to lim.Wait, and returns
// what it took (0 for a small request); release gives it back. A request
// larger than the whole budget takes all of it: it goes alone.
func (in *intake) acquire(n int64) (int64, error) {
	if in == nil || in.lim.Bytes <= 0 || n <= in.lim.Small*intakeFactor {
		return 0, nil
	}
	n = min(n, in.lim.Bytes)
	var timer *time.Timer
	for {
		in.mu.Lock()
		if in.used+n <= in.lim.Bytes {
			in.used += n
			in.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return n, nil
		}
		freed := in.freed
		in.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(in.lim.Wait)
		}
		select {
		case <-freed:
		case <-timer.C:
			return 0, fmt.Errorf("%w: %d bytes of requests in flight; a request of %d waited %v", api.ErrBusy, in.inUse(), n/intakeFactor, in.lim.Wait)
		}
	}
}

func (in *intake) release(n int64) {
	if in == nil || n == 0 {
		return
	}
	in.mu.Lock()
	in.used -= n
	close(in.freed)
	in.freed = make(chan struct{})
	in.mu.Unlock()
}

func (in *intake) inUse() int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.used
}
