package device

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc/tap"

	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/guard"
)

// DefaultBulkCallsPerCaller bounds the bulk calls one caller has going at
// once (WithBulkCallsPerCaller): a client's GetMany keeps five queries in
// flight, the fifth of which waits and is retried as busy.
const DefaultBulkCallsPerCaller = 4

// WithBulkCallsPerCaller sets how many calls that may carry bulk data
// (Put, Send, RunStream, ProgSet, SetStream) one caller may have going at
// once, over all its connections (default DefaultBulkCallsPerCaller; ≤ 0:
// no bound). A plaintext server, whose callers are all one identity, has
// no bound.
func WithBulkCallsPerCaller(n int) Option { return func(o *options) { o.bulkPerCaller = n } }

// bulkMethods are the calls whose message may be large.
var bulkMethods = map[string]bool{"Put": true, "Send": true, "RunStream": true, "QueryLWE": true, "ProgSet": true, "SetStream": true}

// callGate counts each caller's bulk calls from the moment their headers
// arrive: gRPC reads a call's message whole into memory before any codec
// or interceptor sees it, so the count must be taken earlier, in the
// server's InTapHandle, to keep one identity's connections from making
// the device hold many large messages at once. A call past its caller's
// bound is refused there with api.ErrBusy, before its message is read.
type callGate struct {
	mode      guard.Mode
	perCaller int
	mu        sync.Mutex
	calls     map[string]int
}

func newCallGate(mode guard.Mode, perCaller int) *callGate {
	if mode == guard.PlaintextLoopback {
		perCaller = 0
	}
	return &callGate{mode: mode, perCaller: perCaller, calls: map[string]int{}}
}

// tap is the server's InTapHandle.
func (g *callGate) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if g.perCaller <= 0 || !bulkMethods[methodName(info.FullMethodName)] {
		return ctx, nil
	}
	id, err := guard.Authenticate(ctx, g.mode)
	if err != nil {
		return ctx, nil // the guard refuses it, with the reason
	}
	g.mu.Lock()
	if g.calls[id.Name] >= g.perCaller {
		g.mu.Unlock()
		return nil, toStatus(fmt.Errorf("device: %s: %w: %d calls of %s going (at most %d at once)", methodName(info.FullMethodName),
			api.ErrBusy, g.perCaller, id.Name, g.perCaller))
	}
	g.calls[id.Name]++
	g.mu.Unlock()
	// The stream's context ends however the call does (answered,
	// cancelled, refused before its handler ran).
	context.AfterFunc(ctx, func() {
		g.mu.Lock()
		if g.calls[id.Name]--; g.calls[id.Name] <= 0 {
			delete(g.calls, id.Name)
		}
		g.mu.Unlock()
	})
	return ctx, nil
}

// going is how many bulk calls name has going.
func (g *callGate) going(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[name]
}
