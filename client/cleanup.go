package client

import (
	"context"
	"sync"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// The delta segments an update replaces are deleted after the update has
// returned, by one background deleter per client, one Delete at a time.
// Deleted inline, they put up to log2(n) device writes on every carry's
// path (7 deletes made a 235 ms update); one at a time, an update's own
// writes wait behind at most one of them for the store's catalog (the
// device writes objects side by side, but edits its catalog one write at
// a time). Deleting is best effort, as before: a
// segment left behind is unreachable, and the next load or compaction
// removes every segment of an earlier generation.

// maxCleanupQueue bounds the names waiting for the deleter; past it an
// update deletes its own inline (the deleter has fallen behind).
const maxCleanupQueue = 1024

// cleanupTimeout bounds one background Delete.
const cleanupTimeout = time.Minute

type cleaner struct {
	mu    sync.Mutex
	idle  sync.Cond // signalled when the deleter stops
	queue []string
	busy  bool
	done  chan struct{} // closed when the deleter stops (nil: not running)
}

// deleteLater queues names for the background deleter; false if the
// queue is full (nothing queued).
func (c *Client) deleteLater(names ...string) bool {
	k := &c.clean
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(names) == 0 {
		return true
	}
	if len(k.queue)+len(names) > maxCleanupQueue {
		return false
	}
	k.queue = append(k.queue, names...)
	if !k.busy {
		k.busy, k.done = true, make(chan struct{})
		go c.cleanup()
	}
	return true
}

// cleanup deletes the queued names, one at a time, until none is left.
func (c *Client) cleanup() {
	k := &c.clean
	for {
		k.mu.Lock()
		if len(k.queue) == 0 {
			k.busy = false
			close(k.done)
			k.done = nil
			k.idle.Broadcast()
			k.mu.Unlock()
			return
		}
		name := k.queue[0]
		k.queue = k.queue[1:]
		k.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		_, _ = c.dev.Delete(ctx, &devicepb.DeleteRequest{Name: name})
		cancel()
	}
}

// waitCleanup returns once the background deleter has nothing left.
func (c *Client) waitCleanup() {
	k := &c.clean
	k.mu.Lock()
	for k.busy {
		k.idle.Wait()
	}
	k.mu.Unlock()
}

// awaitCleanup is waitCleanup until ctx ends: a failed update waits for
// the segments it wrote to be deleted, so that it leaves nothing behind
// when it returns, but no longer than its caller allows.
func (c *Client) awaitCleanup(ctx context.Context) {
	k := &c.clean
	k.mu.Lock()
	done := k.done
	k.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}
