package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/object"
	"github.com/rosemary-fhe/rosemary/device/objname"
)

// A compaction publishes its generation by a compare-and-swap of the
// manifest, as every update does. An update takes a few small writes; the
// compaction's swap, when updates replaced the manifest meanwhile, must
// first reseal their operations for the new generation, so against a
// writer updating without pause it lost every try (32 of them) and never
// published. Once it has lost one, it raises a fence: the object
// "<name>/head.fence" holding a deadline a little ahead. Updates read the
// head and the fence with one List; while a fence stands they wait (at
// most until its deadline), so the compaction's next swap goes through.
// A compaction that dies leaves a fence that expires by itself. The fence
// is the owner's like every object of the database; readers never look at
// it.

// fenceFor is how long a fence holds updates back: the compaction's last
// step (reseal the changes made meanwhile, one swap) takes tens of
// milliseconds.
const fenceFor = 2 * time.Second

// fencePoll is how often a waiting update looks at the fence again.
const fencePoll = 3 * time.Millisecond

func fenceObject(name string) string { return objname.Fence(name) }

type fence struct {
	Until time.Time `json:"until"`
}

// raiseFence holds updates of database name back for fenceFor.
func (c *Client) raiseFence(ctx context.Context, name string) error {
	b, err := json.Marshal(fence{Until: time.Now().Add(fenceFor)})
	if err != nil {
		return err
	}
	if err := c.writeBlob(ctx, fenceObject(name), b, nil); err != nil {
		return fmt.Errorf("client: fence %s: %w", name, err)
	}
	return nil
}

// lowerFence removes the fence (best effort: it expires anyway).
func (c *Client) lowerFence(ctx context.Context, name string) {
	_, _ = c.dev.Delete(ctx, &devicepb.DeleteRequest{Name: fenceObject(name)})
}

// fenceWait is how long an update must still wait for the fence of
// database name (0: none, gone or expired). A deadline further than
// fenceFor ahead counts as fenceFor (clocks differ; a fence holds no
// update longer).
func (c *Client) fenceWait(ctx context.Context, name string) time.Duration {
	raw, err := c.readBlob(ctx, fenceObject(name))
	if err != nil {
		return 0
	}
	var f fence
	if json.Unmarshal(raw, &f) != nil {
		return 0
	}
	return min(time.Until(f.Until), fenceFor)
}

// readUnfencedHead is readHead once no fence stands: it waits, looking
// again every fencePoll, while the compaction that raised one publishes.
func (c *Client) readUnfencedHead(ctx context.Context, name string) (*Info, object.Generation, error) {
	deadline := time.Now().Add(fenceFor)
	for {
		in, gen, fenced, err := c.readHeadFence(ctx, name)
		if err != nil || !fenced || time.Now().After(deadline) {
			return in, gen, err
		}
		wait := c.fenceWait(ctx, name)
		if wait <= 0 {
			return in, gen, nil
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(min(wait, fencePoll)):
		}
	}
}
