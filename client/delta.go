package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rosemary-fhe/rosemary/client/kv"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
)

// A database's delta holds the changes made since its current generation
// was written — puts and deletes of a keyword database, record sets of a
// PIR database — so that an update costs a few small writes, not a
// reload. It lives in sealed segment objects of its own beside the
// generation (deltaseg.go), listed by the manifest. Every query reads the
// manifest and then every segment whole, whether or not the delta answers
// it: the device sees the same requests for a delta hit, a hit in the main
// generation and an absent key. A bounded delta read whole costs less
// than a PIR query of it would: one LWE query uploads an encrypted secret
// of 256 KiB before its vector.
//
// An update writes its operation as a new segment, merged with the newest
// segments as a binary counter merges carries (a segment absorbs the ones
// after it that hold no more operations than it), so a delta of n
// operations is at most log2(n)+1 segments and an update rewrites
// O(log n) operations on average, not the whole delta. The new segment is
// published by a compare-and-swap of the manifest, as a load is: of two
// updates at once one publishes, the other retries on the new manifest,
// and none is lost. Segments an update replaced are deleted after the next
// update (a query that read the manifest just before still finds them),
// in the background (cleanup.go),
// and every segment of an earlier generation by a load or compaction.
// Compact folds the delta into a new generation.

// Delta is the delta a manifest lists: its segments, oldest first.
type Delta struct {
	Ops   int `json:"ops"`
	Bytes int `json:"bytes"` // the operations encoded as one list (kv.EncodeOps)
	// Segments: the sealed segment objects, oldest first; Retired: those
	// the latest update replaced, deleted by the next one.
	Segments []DeltaSegment `json:"segments,omitempty"`
	Retired  []string       `json:"retired,omitempty"`
	// Appended: records appended to a PIR database since its generation
	// was written, the manifest's last ones (its Records counts them).
	Appended int `json:"appended,omitempty"`
}

// appended is the records the delta appends (none: 0).
func (d *Delta) appended() int {
	if d == nil {
		return 0
	}
	return d.Appended
}

// genRecords is the records of the generation itself: the manifest's
// Records but those appended since (which live in the delta).
func (in *Info) genRecords() int { return in.Records - in.Delta.appended() }

// Delta bounds.
const (
	// DefaultDeltaMax is a delta's default bound (encoded bytes): room
	// for 10,000 updates of 256-byte values and keys up to 100 bytes.
	// Every query reads the whole delta (one wire byte per byte).
	DefaultDeltaMax = 4 << 20
	// MaxDeltaMax bounds the bound: a segment is read in one message.
	MaxDeltaMax = 32 << 20
)

// Errors of updates.
var (
	// ErrDeltaFull: the delta is at its bound; compact the database.
	ErrDeltaFull = errors.New("client: the database's delta is full (compact it)")
	// ErrUpdateConflict: other writers replaced the manifest every time
	// this update tried to publish (the update was not applied).
	ErrUpdateConflict = errors.New("client: the database kept changing under the update")
	// ErrNotFound: the key is not in the keyword database (only the
	// client learns this).
	ErrNotFound = errors.New("client: key not found")
	// ErrRecordTooLarge: a record set or appended is longer than the
	// database's records.
	ErrRecordTooLarge = errors.New("client: record larger than the database's records")
	// Input errors of keyword databases (each names its line).
	ErrMalformed     = kv.ErrMalformed
	ErrDuplicateKey  = kv.ErrDuplicateKey
	ErrValueTooLarge = kv.ErrValueTooLarge
	ErrKeyTooLarge   = kv.ErrKeyTooLarge
)

// deltaMax is a manifest's delta bound.
func (in *Info) deltaMax() int {
	m, _ := kv.DeltaBounds(in.DeltaMax, in.CompactAt, DefaultDeltaMax, MaxDeltaMax)
	return m
}

// compactAt is the delta size at which compaction is due.
func (in *Info) compactAt() int {
	_, due := kv.DeltaBounds(in.DeltaMax, in.CompactAt, DefaultDeltaMax, MaxDeltaMax)
	return due
}

// size is the delta's operations and their size encoded as one list.
func (d *Delta) size() (ops, bytes int) {
	if d == nil {
		return 0, len(kv.EncodeOps(nil, nil))
	}
	return d.Ops, d.Bytes
}

// Update is what an update left: the delta's size, and whether compaction
// is due (the delta has reached the database's CompactAt).
type Update struct {
	DeltaOps   int  `json:"delta_ops"`
	DeltaBytes int  `json:"delta_bytes"`
	CompactDue bool `json:"compact_due"`
}

// maxUpdateTries bounds the compare-and-swap retries of one update.
const maxUpdateTries = 32

// update appends operations to database name's delta: read the manifest,
// write the operations build makes from it (merged with the newest
// segments) as a new segment, replace the manifest if nothing replaced it
// meanwhile, else try again on the new manifest. build validates against
// the manifest and returns the operations and how many records they
// append (the last ones of the database from now on).
func (c *Client) update(ctx context.Context, name string, build func(*Info) ([]kv.Op, int, error)) (*Update, error) {
	u, err := c.tryUpdate(ctx, name, build)
	if err != nil {
		// The segments its lost tries wrote were queued for the background
		// deleter: a failed update leaves nothing behind when it returns.
		c.awaitCleanup(ctx)
	}
	return u, err
}

func (c *Client) tryUpdate(ctx context.Context, name string, build func(*Info) ([]kv.Op, int, error)) (*Update, error) {
	for try := range maxUpdateTries {
		in, headGen, err := c.readUnfencedHead(ctx, name)
		if err != nil {
			return nil, err
		}
		add, appended, err := build(in)
		if err != nil {
			return nil, err
		}
		opBytes := len(kv.EncodeOps(nil, add)) - len(kv.EncodeOps(nil, nil))
		nops, size := in.Delta.size()
		nops, size = nops+len(add), size+opBytes
		if size > in.deltaMax() {
			return nil, fmt.Errorf("client: update %s: %w: %d bytes with this update, at most %d", name, ErrDeltaFull, size, in.deltaMax())
		}
		var segs []DeltaSegment
		if in.Delta != nil {
			segs = in.Delta.Segments
		}
		// Carry: the newest segments holding no more operations than the
		// merged one so far join it. A retry writes op alone: it reads
		// nothing, so it is quicker than the update of a writer that won
		// the last swap and goes on (writers in a tight loop would
		// otherwise starve one of them); the next update carries it.
		keep, merged := len(segs), len(add)
		for try == 0 && keep > 0 && segs[keep-1].Ops <= merged {
			keep--
			merged += segs[keep].Ops
		}
		ops, err := c.readSegments(ctx, in, segs[keep:])
		if err != nil {
			// A segment gone under this manifest: another writer replaced
			// the manifest and removed what it retired. Try again on the
			// new one; gone under a manifest still current is a loss.
			if isNotFound(err) {
				if _, now, herr := c.readHead(ctx, name); herr == nil && now != headGen {
					continue
				}
			}
			return nil, err
		}
		seg, err := c.writeSegment(ctx, in, append(ops, add...))
		if err != nil {
			return nil, err
		}
		next := *in
		next.Parts = in.Parts.Clone()
		next.Delta = &Delta{Ops: nops, Bytes: size, Segments: append(segs[:keep:keep], seg), Appended: in.Delta.appended() + appended}
		next.Records += appended
		for _, s := range segs[keep:] {
			next.Delta.Retired = append(next.Delta.Retired, s.Object)
		}
		err = c.writeInfo(ctx, &next, headGen)
		if err != nil {
			// No manifest lists seg. Deleted in the background, so that a
			// writer that lost a swap is not a write behind the winner at
			// its next try.
			if !c.deleteLater(seg.Object) {
				c.deleteObjects(context.WithoutCancel(ctx), seg.Object)
			}
			if errors.Is(err, api.ErrStale) {
				if err := backoffAfterLoss(ctx, try); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		if in.Delta != nil && !c.deleteLater(in.Delta.Retired...) {
			c.deleteObjects(ctx, in.Delta.Retired...)
		}
		return &Update{DeltaOps: nops, DeltaBytes: size, CompactDue: size >= in.compactAt()}, nil
	}
	return nil, fmt.Errorf("client: update %s: %w (%d tries)", name, ErrUpdateConflict, maxUpdateTries)
}

// deleteObjects deletes objects no manifest lists any more. It is best
// effort: one left behind is unreachable, and the next load or
// compaction removes every segment of an earlier generation.
func (c *Client) deleteObjects(ctx context.Context, names ...string) {
	for _, n := range names {
		_, _ = c.dev.Delete(ctx, &devicepb.DeleteRequest{Name: n})
	}
}

// Put sets key to value in keyword database name, visible to the next
// lookup. The value is at most the database's maximum.
func (c *Client) Put(ctx context.Context, name string, key, value []byte) (*Update, error) {
	return c.update(ctx, name, func(in *Info) ([]kv.Op, int, error) {
		if err := kvOnly(in, "Put"); err != nil {
			return nil, 0, err
		}
		if err := in.KV.Layout.Check(kv.Pair{Key: key, Value: value, Line: 0}); err != nil {
			return nil, 0, err
		}
		return []kv.Op{{Kind: kv.OpPut, Key: key, Value: value}}, 0, nil
	})
}

// Delete removes key from keyword database name (absent keys too: the
// device learns nothing either way).
func (c *Client) Delete(ctx context.Context, name string, key []byte) (*Update, error) {
	return c.update(ctx, name, func(in *Info) ([]kv.Op, int, error) {
		if err := kvOnly(in, "Delete"); err != nil {
			return nil, 0, err
		}
		if len(key) > kv.MaxKey {
			return nil, 0, fmt.Errorf("%w: %d bytes (at most %d)", ErrKeyTooLarge, len(key), kv.MaxKey)
		}
		return []kv.Op{{Kind: kv.OpDelete, Key: key}}, 0, nil
	})
}

// Set replaces record index of PIR database name (shorter records are
// zero-padded), visible to the next Get. An appended record is set too.
func (c *Client) Set(ctx context.Context, name string, index int, record []byte) (*Update, error) {
	return c.update(ctx, name, func(in *Info) ([]kv.Op, int, error) {
		if err := pirOnly(in, "Set"); err != nil {
			return nil, 0, err
		}
		if index < 0 || index >= in.Records {
			return nil, 0, fmt.Errorf("client: set %s: %w: index %d of %d records", name, ErrIndexOutOfRange, index, in.Records)
		}
		if len(record) > in.pir().RecordSize {
			return nil, 0, fmt.Errorf("client: set %s[%d]: %w: a record of %d bytes, the database's are %d", name, index, ErrRecordTooLarge, len(record), in.pir().RecordSize)
		}
		return []kv.Op{{Kind: kv.OpSet, Index: int64(index), Value: record}}, 0, nil
	})
}

// pirOnly refuses a database that is not an index PIR database.
func pirOnly(in *Info, op string) error {
	if in.Kind != KindPIR {
		return fmt.Errorf("%w: %q is a %s database, %s writes PIR databases", ErrKind, in.Name, in.Kind, op)
	}
	return nil
}

// kvOnly refuses a database that is not a keyword database.
func kvOnly(in *Info, op string) error {
	if in.Kind != KindKV || in.KV == nil {
		return fmt.Errorf("%w: %q is a %s database, %s is for kv databases", ErrKind, in.Name, in.Kind, op)
	}
	return nil
}

// sameDelta reports whether two manifests list the same delta segments.
func sameDelta(a, b *Delta) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Segments) != len(b.Segments) {
		return false
	}
	for i := range a.Segments {
		if a.Segments[i].Object != b.Segments[i].Object {
			return false
		}
	}
	return true
}

// backoffAfterLoss waits before an update's next try once it has lost
// the manifest's swap try+1 times: a random time below 1 ms · 2^try, at
// most 64 ms (exponential backoff with full jitter). Two writers in a
// tight loop otherwise keep meeting in the same window and one can lose
// every try; the first retry waits under a millisecond.
func backoffAfterLoss(ctx context.Context, try int) error {
	limit := time.Millisecond << min(try, 6)
	t := time.NewTimer(rand.N(limit))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
